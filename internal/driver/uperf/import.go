package uperf

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
)

var _ driver.Importer = Driver{}

// ImportFormats implements driver.Importer.
func (Driver) ImportFormats() string {
	return `a master's default or -R output, nthreads or nprocs groups (with cnperf's
history appended, percentiles too)`
}

// Import implements driver.Importer for a saved uperf master output: the default output or
// -R's raw lines (with the -X history appended after HistoryMarker, as cnperf's client command
// does), of groups of nthreads or nprocs. The profile is recognised from cnperf's and
// k8s-netperf's profile names; other profiles need ImportAs.
func (d Driver) Import(name string, data []byte) ([]driver.ImportedCase, error) {
	return d.ImportAs(name, data, "")
}

// profileFromName recognises cnperf's profile names ("cnperf-TCP_RR"; uperf prints them in
// lower case) and k8s-netperf's ("stream-tcp-1024-1", "rr-udp-64-2"), else "".
func profileFromName(name string) api.Profile {
	n := strings.ToUpper(name)
	if p := api.Profile(strings.TrimPrefix(n, "CNPERF-")); strings.HasPrefix(n, "CNPERF-") && p.Valid() {
		return p
	}
	parts := strings.Split(n, "-")
	if len(parts) < 2 {
		return ""
	}
	switch parts[0] + "-" + parts[1] {
	case "STREAM-TCP":
		return api.TCPStream
	case "STREAM-UDP":
		return api.UDPStream
	case "RR-TCP":
		return api.TCPRR
	case "RR-UDP":
		return api.UDPRR
	}
	return ""
}

// sizeFromName is the message size in k8s-netperf's profile names ("rr-tcp-1024-1": protocol,
// message size, parallelism), else 0.
func sizeFromName(name string) int {
	parts := strings.Split(name, "-")
	if len(parts) != 4 || (parts[0] != "rr" && parts[0] != "stream") {
		return 0
	}
	n, err := strconv.Atoi(parts[2])
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// ImportAs is Import with the profile given.
func (Driver) ImportAs(name string, data []byte, profile api.Profile) ([]driver.ImportedCase, error) {
	r, err := ParseOutput(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if profile == "" {
		profile = profileFromName(r.ProfileName)
	}
	msg := sizeFromName(r.ProfileName)
	if profile == "" {
		return nil, fmt.Errorf("%s: uperf profile %q does not say which test it is; give the profile", name, r.ProfileName)
	}
	threads := r.Threads
	if threads < 1 {
		threads = 1
	}
	req, resp := msg, 1 // TCP_STREAM_LAT's small message: k8s-netperf's default (its name does not say)
	s, err := r.ToSample(profile, threads, 0, req, resp)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	// The measured window runs from the transaction's start to its last progress line; its
	// whole seconds are the duration the profile asked for.
	p := api.Params{Samples: 1, Parallel: threads, DurationSeconds: math.Round(s.DurationSeconds), MessageSizeBytes: msg}
	return []driver.ImportedCase{{Profile: profile, Params: p, Sample: s}}, nil
}
