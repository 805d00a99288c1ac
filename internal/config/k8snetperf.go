package config

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/plan"
)

// k8sNetperfTest is one test of k8s-netperf's netperf.yml: the fields of its pkg/config.Config
// as yaml.v3 reads them (metric and acrossaz have no yaml tag there, so yaml.v3 uses the
// lower-cased Go names). k8s-netperf decodes with yaml.v3 without known-fields checking: a key
// it does not know is ignored, and cnperf ignores it too, with a warning.
type k8sNetperfTest struct {
	Parallelism     *int   `yaml:"parallelism"`
	Duration        *int   `yaml:"duration"`
	Profile         string `yaml:"profile"`
	Samples         *int   `yaml:"samples"`
	MessageSize     *int   `yaml:"messagesize"`
	MessageReadSize *int   `yaml:"messagereadsize"`
	Burst           *int   `yaml:"burst"`
	Service         *bool  `yaml:"service"`
	Metric          string `yaml:"metric"`
	AcrossAZ        *bool  `yaml:"acrossaz"`
}

var k8sNetperfFields = []string{"parallelism", "duration", "profile", "samples", "messagesize", "messagereadsize", "burst", "service", "metric", "acrossaz"}

// k8sNetperfValidTests is k8s-netperf's pkg/config validTests, matched as it matches it:
// case-insensitive and unanchored ("(?i)" + validTests, MatchString).
var k8sNetperfValidTests = regexp.MustCompile("(?i)tcp_stream_lat|tcp_stream|udp_stream|tcp_rr|udp_rr|tcp_crr|udp_crr|sctp_stream|sctp_rr|sctp_crr")

// readK8sNetperf converts k8s-netperf's netperf.yml into a plan, one group per test, in file
// order (k8s-netperf reads v1 into a Go map and runs it in random order; cnperf keeps the
// order written). Each group is named after its test. The file names no path or driver:
// k8s-netperf takes them from its command line, and so does cnperf (plan.Options).
//
// v1:                         v2 (k8s-netperf's layout, the name and the fields side by side):
//
//	TCPStream:                 tests:
//	  profile: TCP_STREAM        - TCPStream:
//	  duration: 10                 profile: TCP_STREAM
//	                               duration: 10
//
// What k8s-netperf's validConfig refuses, cnperf refuses: a profile outside its validTests,
// and duration, samples, messagesize or parallelism missing or below 1 (there are no
// defaults: a missing field is 0). A profile k8s-netperf accepts but no cnperf driver runs
// (UDP_CRR, SCTP_*) is skipped with a warning, as k8s-netperf's drivers skip the tests they do
// not support. TCP_STREAM_LAT runs (uperf and native); its messagereadsize is the small
// messages' size (responseSize).
func readK8sNetperf(d *decoder, root *yaml.Node, format string, lines LineIndex) *api.Plan {
	p := &api.Plan{APIVersion: api.APIVersion, Kind: api.KindPlan}
	d.lenient, d.peer = map[reflect.Type]bool{reflect.TypeOf(k8sNetperfTest{}): true}, "k8s-netperf"
	names := map[string]int{}
	if format == FormatK8sNetperfV1 {
		seen := map[string]int{}
		for _, kv := range d.pairs(root, "") {
			k := d.resolve(kv.key)
			name := k.Value
			if line, dup := seen[name]; dup {
				d.errorf(k, name, "duplicate test name %q (already at line %d)", name, line)
				continue
			}
			seen[name] = k.Line
			var t k8sNetperfTest
			d.decodeInto(kv.val, &t, name)
			addK8sNetperf(d, p, lines, names, name, k, name, &t)
		}
		return p
	}
	// v2 is read into map[string][]Config: every top-level key holds a list of tests.
	for _, kv := range d.pairs(root, "") {
		k := d.resolve(kv.key)
		seq := d.resolve(kv.val)
		if seq.Kind != yaml.SequenceNode {
			if isNull(seq) {
				continue // an empty list for yaml.v3
			}
			d.errorf(seq, k.Value, "expected a list of tests, got %s", describe(seq))
			continue
		}
		if k.Value != "tests" {
			d.warnf(k, k.Value, "k8s-netperf reads the tests of every top-level list, not only tests:; so does cnperf")
		}
		for i, item := range seq.Content {
			item = d.resolve(item)
			base := fmt.Sprintf("%s[%d]", k.Value, i)
			if item.Kind != yaml.MappingNode {
				d.errorf(item, base, "expected a test (a name and its fields), got %s", describe(item))
				continue
			}
			entries := d.pairs(item, base)
			name, nameNode, fields := "", item, entries
			if len(entries) > 0 {
				k0, v0 := d.resolve(entries[0].key), d.resolve(entries[0].val)
				if k0.Kind == yaml.ScalarNode && !slices.Contains(k8sNetperfFields, k0.Value) {
					switch {
					case isNull(v0):
						name, nameNode, fields = k0.Value, k0, entries[1:]
					case v0.Kind == yaml.MappingNode:
						d.errorf(k0, base+"."+k0.Value, "k8s-netperf reads a test's fields beside its name, not under it "+
							"(write \"- %s:\" and then its fields at the same indentation); as written the test has no profile", k0.Value)
						continue
					}
				}
			}
			m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: item.Line, Column: item.Column}
			for _, e := range fields {
				m.Content = append(m.Content, e.key, e.val)
			}
			var t k8sNetperfTest
			d.decodeInto(m, &t, base)
			addK8sNetperf(d, p, lines, names, name, nameNode, base, &t)
		}
	}
	return p
}

// addK8sNetperf appends one test as a group and indexes the group's plan paths to the lines of
// the fields they came from (base is the test's path in the file). names counts the group
// names taken: k8s-netperf ignores v2 names, so two tests may share one; the second becomes
// "NAME-2".
func addK8sNetperf(d *decoder, p *api.Plan, lines LineIndex, names map[string]int, name string, nameNode *yaml.Node, base string, t *k8sNetperfTest) {
	nerr := len(d.errs)
	posOf := func(field string) (*yaml.Node, bool) {
		if pos, ok := d.lines[join(base, field)]; ok {
			return &yaml.Node{Line: pos.Line, Column: pos.Column}, true
		}
		return nameNode, false
	}
	warn := func(field, format string, a ...any) {
		n, _ := posOf(field)
		d.warnf(n, join(base, field), format, a...)
	}
	raw := strings.TrimSpace(t.Profile)
	profile := api.Profile(strings.ToUpper(raw))
	switch {
	case !k8sNetperfValidTests.MatchString(t.Profile):
		n, _ := posOf("profile")
		msg := fmt.Sprintf("unknown netperf profile %q", t.Profile)
		if raw == "" {
			msg = "missing profile"
		} else if s := plan.Closest(string(profile), plan.Strings(api.Profiles)); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		d.errorf(n, join(base, "profile"), "%s: k8s-netperf accepts TCP_STREAM, UDP_STREAM, TCP_RR, UDP_RR, TCP_CRR, "+
			"TCP_STREAM_LAT, UDP_CRR, SCTP_STREAM, SCTP_RR, SCTP_CRR", msg)
	case !profile.Valid():
		// Accepted by k8s-netperf; skipped below once the other fields are checked.
	}
	required := []struct {
		name string
		v    *int
	}{{"duration", t.Duration}, {"samples", t.Samples}, {"messagesize", t.MessageSize}, {"parallelism", t.Parallelism}}
	decodeFailed := func(field string) bool {
		return slices.ContainsFunc(d.errs[:nerr], func(e FileError) bool { return e.Field == join(base, field) })
	}
	// A field whose decoding failed (wrong type, a duplicate key) was reported already and is
	// still nil: the test stops here too.
	failed := false
	for _, r := range required {
		if decodeFailed(r.name) {
			failed = true
			continue
		}
		if r.v == nil {
			d.errorf(nameNode, join(base, r.name), "missing %s: k8s-netperf has no default and refuses the file (%s must be > 0)", r.name, r.name)
		} else if *r.v < 1 {
			n, _ := posOf(r.name)
			d.errorf(n, join(base, r.name), "%s must be > 0, got %d (k8s-netperf refuses it too)", r.name, *r.v)
		}
	}
	if failed || len(d.errs) > nerr {
		return
	}
	if !profile.Valid() {
		warn("profile", "profile %q: no cnperf driver runs it: test skipped", t.Profile)
		return
	}
	if t.Metric != "" {
		warn("metric", "metric is set by k8s-netperf itself from the profile; the file's value is ignored")
	}
	if t.AcrossAZ != nil {
		warn("acrossaz", "acrossaz is set by k8s-netperf itself (--across and the nodes' zones); the file's value is ignored")
	}
	if t.MessageReadSize != nil && profile != api.TCPStreamLat {
		warn("messagereadsize", "messagereadsize applies to TCP_STREAM_LAT only; ignored for %s", profile)
	}

	if name != "" {
		names[name]++
		if n := names[name]; n > 1 {
			name = fmt.Sprintf("%s-%d", name, n)
		}
	}
	gp := fmt.Sprintf("tests[%d]", len(p.Tests))
	at := Pos{Line: nameNode.Line, Column: nameNode.Column, Field: base}
	lines[gp] = at
	lines[gp+".name"] = at
	from := func(planField, fileField string) {
		if pos, ok := d.lines[join(base, fileField)]; ok {
			lines[gp+"."+planField] = pos
		}
	}
	g := api.TestGroup{Name: name}
	g.Profiles = []api.Profile{profile}
	from("profiles", "profile")
	from("profiles[0]", "profile")
	g.Duration = strconv.Itoa(*t.Duration) + "s"
	from("duration", "duration")
	g.Samples = t.Samples
	from("samples", "samples")
	g.MessageSizes = []int{*t.MessageSize}
	from("messageSizes", "messagesize")
	from("messageSizes[0]", "messagesize")
	g.Parallel = []int{*t.Parallelism}
	from("parallel", "parallelism")
	from("parallel[0]", "parallelism")
	if t.Burst != nil && *t.Burst != 0 {
		// k8s-netperf passes netperf -b only for TCP_RR and a burst > 0.
		if profile == api.TCPRR && *t.Burst > 0 {
			g.Burst = []int{*t.Burst}
			from("burst", "burst")
			from("burst[0]", "burst")
		} else {
			warn("burst", "burst %d: k8s-netperf uses a burst > 0 with TCP_RR only; ignored for %s", *t.Burst, profile)
		}
	}
	if t.Service != nil {
		g.Service = t.Service
		from("service", "service")
	}
	if profile == api.TCPStreamLat && t.MessageReadSize != nil && *t.MessageReadSize > 0 {
		// the small messages' size (k8s-netperf's default 1 is cnperf's too)
		g.ResponseSize = t.MessageReadSize
		from("responseSize", "messagereadsize")
	}
	p.Tests = append(p.Tests, g)
}

func itoa(i int) string { return strconv.Itoa(i) }
