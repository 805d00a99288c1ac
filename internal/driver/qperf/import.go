package qperf

import (
	"fmt"
	"strings"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/driver/toolkit"
)

var _ driver.Importer = Driver{}

// ImportFormats implements driver.Importer.
func (Driver) ImportFormats() string {
	return `any -v level and unit style (one block per test)`
}

// Import implements driver.Importer. A saved qperf output may hold several tests ("qperf
// HOST tcp_bw tcp_lat" prints one block per test); each block becomes a case. Any -v level
// and unit style is accepted; default (non -uu) outputs are rounded by qperf and say so.
func (Driver) Import(name string, data []byte) ([]driver.ImportedCase, error) {
	blocks := splitBlocks(toolkit.Text(data))
	if len(blocks) == 0 {
		return nil, fmt.Errorf("%s: no qperf test report found", name)
	}
	var out []driver.ImportedCase
	for i, b := range blocks {
		r, err := ParseOutput([]byte(b), false)
		if err != nil {
			return nil, fmt.Errorf("%s: test %d: %w", name, i+1, err)
		}
		p := api.Params{Samples: 1, Parallel: 1}
		if t, ok := r.Values["time"]; ok {
			p.DurationSeconds = t
		}
		if m, ok := r.Values["msg_size"]; ok {
			p.MessageSizeBytes = int(m)
		}
		if port, ok := r.Values["port"]; ok {
			p.Options = map[string]string{OptDataPort: fmt.Sprint(int(port))}
		}
		out = append(out, driver.ImportedCase{Profile: r.Profile(), Params: p, Sample: r.Sample})
	}
	return out, nil
}

// splitBlocks cuts text at test header lines ("tcp_bw:").
func splitBlocks(text string) []string {
	var blocks []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			blocks = append(blocks, strings.Join(cur, "\n"))
		}
		cur = nil
	}
	for _, line := range strings.Split(strings.ReplaceAll(text, "\r", ""), "\n") {
		if headerRE.MatchString(line) {
			flush()
		}
		if len(cur) > 0 || headerRE.MatchString(line) {
			cur = append(cur, line)
		}
	}
	flush()
	return blocks
}
