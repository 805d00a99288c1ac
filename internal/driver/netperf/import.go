package netperf

import (
	"fmt"
	"math"
	"strings"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/driver/toolkit"
)

var _ driver.Importer = Driver{}

// ImportFormats implements driver.Importer.
func (Driver) ImportFormats() string {
	return `keyval (-k), CSV with its column titles (-o), omni -O, and the classic tables of every
test, with or without -c -C and banner (-P 0: give --profile); several
tests in one file are split at their banner lines`
}

// Import implements driver.Importer. A saved netperf output may hold several tests, each
// starting with its banner line; keyval (-k), CSV with column titles (-o) and the classic
// tables (every test, with or without -c -C, with or without banner and header) are read. The profile comes from the banner ("MIGRATED TCP
// REQUEST/RESPONSE TEST ...") or the PROTOCOL and DIRECTION selectors; when neither is there
// (banner suppressed with -P 0) use ImportAs.
func (d Driver) Import(name string, data []byte) ([]driver.ImportedCase, error) {
	return d.ImportAs(name, data, "")
}

// ImportAs is Import with the profile given (used when the output cannot tell it).
func (Driver) ImportAs(name string, data []byte, profile api.Profile) ([]driver.ImportedCase, error) {
	blocks := splitTests(toolkit.Text(data))
	if len(blocks) == 0 {
		return nil, fmt.Errorf("%s: empty netperf output", name)
	}
	var out []driver.ImportedCase
	for i, b := range blocks {
		r, err := parseAny(b)
		if err != nil {
			return nil, fmt.Errorf("%s: test %d: %w", name, i+1, err)
		}
		p := profile
		if guessed := r.Profile(); p == "" {
			p = guessed
		} else if guessed != "" && guessed != p {
			return nil, fmt.Errorf("%s: test %d is %s by its output, not %s", name, i+1, guessed, p)
		}
		if p == "" {
			return nil, fmt.Errorf("%s: test %d: the output does not say which test ran (no banner, no PROTOCOL/DIRECTION selectors); give the profile", name, i+1)
		}
		if r.Headerless {
			if err := r.fits(p); err != nil {
				return nil, fmt.Errorf("%s: test %d: %w", name, i+1, err)
			}
		}
		s, err := r.ToSample(p)
		if err != nil {
			return nil, fmt.Errorf("%s: test %d: %w", name, i+1, err)
		}
		if r.Headerless {
			toolkit.AddNote(&s, "netperf table without banner or header (-P 0): throughput read in netperf's default unit, 10^6 bits/s (-f m)")
		}
		out = append(out, driver.ImportedCase{Profile: p, Params: r.params(p), Sample: s})
	}
	return out, nil
}

func parseAny(text string) (Result, error) {
	var rows [][]string
	for _, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(l)
		if keyvalRE.MatchString(t) {
			return ParseKeyval([]byte(text))
		}
		if isClassicUnits(t) {
			return ParseClassic([]byte(text))
		}
		if r := numericRow(t); r != nil {
			rows = append(rows, r)
		}
	}
	if r, err := ParseHuman([]byte(text)); err == nil {
		return r, nil
	}
	if r, err := ParseCSV([]byte(text)); err == nil || shapeOf(rows) == classicNone {
		return r, err
	}
	return ParseClassic([]byte(text)) // -P 0: rows without banner or header
}

// fits checks that a headerless classic table is the kind of table profile p prints.
func (r Result) fits(p api.Profile) error {
	var kind string
	switch {
	case r.Values["TRANSACTION_RATE"] != "":
		kind = "request/response"
	case r.Values["REMOTE_RECV_CALLS"] != "":
		kind = "UDP_STREAM"
	default:
		kind = "TCP stream"
	}
	want := "TCP stream"
	if p.IsRR() {
		want = "request/response"
	} else if p == api.UDPStream {
		want = "UDP_STREAM"
	}
	if kind != want {
		return fmt.Errorf("the table is netperf's %s table, not %s's", kind, p)
	}
	return nil
}

// splitTests cuts a file at banner lines; text before the first banner is its own block.
func splitTests(text string) []string {
	var blocks []string
	var cur []string
	flush := func() {
		if strings.TrimSpace(strings.Join(cur, "")) != "" {
			blocks = append(blocks, strings.Join(cur, "\n"))
		}
		cur = nil
	}
	for _, l := range strings.Split(strings.ReplaceAll(text, "\r", ""), "\n") {
		t := strings.TrimSpace(l)
		if strings.Contains(t, " TEST") && bannerRE.MatchString(t) && !keyvalRE.MatchString(t) {
			flush()
		}
		cur = append(cur, l)
	}
	flush()
	return blocks
}

func (r Result) params(p api.Profile) api.Params {
	pr := api.Params{Samples: 1, Parallel: 1}
	if e, ok, _ := r.Float("ELAPSED_TIME"); ok {
		pr.DurationSeconds = math.Round(e)
	}
	if p.IsRR() {
		if q, ok, _ := r.Float("REQUEST_SIZE"); ok {
			pr.MessageSizeBytes = int(q)
		}
		if rs, ok, _ := r.Float("RESPONSE_SIZE"); ok && int(rs) != pr.MessageSizeBytes {
			pr.ResponseSizeBytes = int(rs)
		}
		if b, ok, _ := r.Float("BURST_SIZE"); ok && b > 0 {
			pr.Burst = int(b)
		}
	} else if p == api.TCPMaerts {
		// netserver sends: REMOTE_SEND_SIZE; a -P 0 table is read as a stream table, its "Send
		// Message Size" column (the sender's) under LOCAL_SEND_SIZE.
		key := "REMOTE_SEND_SIZE"
		if r.Headerless {
			key = "LOCAL_SEND_SIZE"
		}
		if m, ok, _ := r.Float(key); ok {
			pr.MessageSizeBytes = int(m)
		}
	} else if m, ok, _ := r.Float("LOCAL_SEND_SIZE"); ok {
		pr.MessageSizeBytes = int(m)
	}
	return pr
}
