package iperf3

import (
	"fmt"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
)

var _ driver.Importer = Driver{}

// ImportFormats implements driver.Importer.
func (Driver) ImportFormats() string {
	return `the -J JSON document (several appended documents are several runs)`
}

// Import implements driver.Importer: every iperf3 -J document in data (one file may hold
// several appended runs) becomes one case with one sample. Only JSON output is accepted:
// iperf3's human-readable output rounds to three digits.
func (Driver) Import(name string, data []byte) ([]driver.ImportedCase, error) {
	results, err := ParseAll(data)
	if err != nil {
		if len(results) > 0 {
			// A failed run after good ones: not one failed run, refuse the file as a whole.
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	out := make([]driver.ImportedCase, 0, len(results))
	for _, r := range results {
		s := r.Sample
		if !r.Start.IsZero() {
			s.StartTime = r.Start
			d := r.Duration + float64(r.Omit)
			s.EndTime = r.Start.Add(time.Duration(d * float64(time.Second)))
		}
		p := api.Params{
			DurationSeconds:  r.Duration,
			WarmupSeconds:    float64(r.Omit),
			Samples:          1,
			MessageSizeBytes: r.BlockBytes,
			Parallel:         r.Streams,
		}
		if p.Parallel < 1 {
			p.Parallel = 1
		}
		if r.TargetBitrate > 0 {
			p.RateBitsPerSecond = r.TargetBitrate * float64(p.Parallel)
		}
		if r.Bidir {
			p.Options = map[string]string{OptBidir: "true"}
		}
		if r.Version != "" {
			s.Notes = append(s.Notes, "imported from "+r.Version+" JSON output")
		}
		out = append(out, driver.ImportedCase{Profile: r.Profile(), Params: p, Sample: s})
	}
	return out, nil
}
