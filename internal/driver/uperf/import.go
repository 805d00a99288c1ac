package uperf

import (
	"fmt"
	"math"
	"strings"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
)

var _ driver.Importer = Driver{}

// Import implements driver.Importer for a saved "uperf -m ... -R" master output (with the
// -X history appended after HistoryMarker, as cnperf's client command does). The profile is
// recognised from cnperf's own profile names ("cnperf-TCP_RR"); other profiles need ImportAs.
func (d Driver) Import(name string, data []byte) ([]driver.ImportedCase, error) {
	return d.ImportAs(name, data, "")
}

// ImportAs is Import with the profile given.
func (Driver) ImportAs(name string, data []byte, profile api.Profile) ([]driver.ImportedCase, error) {
	r, err := ParseOutput(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if p := api.Profile(strings.TrimPrefix(r.ProfileName, "cnperf-")); profile == "" && strings.HasPrefix(r.ProfileName, "cnperf-") && p.Valid() {
		profile = p
	}
	if profile == "" {
		return nil, fmt.Errorf("%s: uperf profile %q does not say which test it is; give the profile", name, r.ProfileName)
	}
	threads := r.Threads
	if threads < 1 {
		threads = 1
	}
	s, err := r.ToSample(profile, threads)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	// The measured window runs from the transaction's start to its last progress line; its
	// whole seconds are the duration the profile asked for.
	p := api.Params{Samples: 1, Parallel: threads, DurationSeconds: math.Round(s.DurationSeconds)}
	return []driver.ImportedCase{{Profile: profile, Params: p, Sample: s}}, nil
}
