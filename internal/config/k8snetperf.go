package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// k8sNetperfTest is one test of k8s-netperf's netperf.yml: the fields its pkg/config.Config
// reads from YAML (duration is a number of seconds there; "10s" is accepted here too).
type k8sNetperfTest struct {
	Parallelism *int   `yaml:"parallelism"`
	Profile     string `yaml:"profile"`
	Duration    string `yaml:"duration"`
	Samples     *int   `yaml:"samples"`
	MessageSize *int   `yaml:"messagesize"`
	Burst       *int   `yaml:"burst"`
	Service     *bool  `yaml:"service"`
}

var k8sNetperfFields = []string{"parallelism", "profile", "duration", "samples", "messagesize", "burst", "service"}

// readK8sNetperf converts k8s-netperf's netperf.yml into a plan, one group per test, in file
// order (v1 is a YAML mapping, which k8s-netperf runs in random order; cnperf keeps the order
// written). Each group is named after its test. The file names no path or driver: k8s-netperf
// takes them from its command line, and so does cnperf (plan.Options).
//
// v1:                         v2 (k8s-netperf's own layout, name and fields side by side):
//
//	TCPStream:                 tests:
//	  profile: TCP_STREAM        - TCPStream:
//	  duration: 10                 profile: TCP_STREAM
//	                               duration: 10
//
// v2 also accepts the fields nested under the name ("- TCPStream: {profile: ...}").
func readK8sNetperf(d *decoder, root *yaml.Node, format string, lines LineIndex) *api.Plan {
	p := &api.Plan{APIVersion: api.APIVersion, Kind: api.KindPlan}
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
			addK8sNetperf(d, p, lines, name, k, name, &t)
		}
		return p
	}
	for _, kv := range d.pairs(root, "") {
		k := d.resolve(kv.key)
		if k.Value != "tests" {
			d.errorf(k, k.Value, "unknown field %q: a k8s-netperf v2 file has only tests:", k.Value)
			continue
		}
		seq := d.resolve(kv.val)
		if seq.Kind != yaml.SequenceNode {
			d.errorf(seq, "tests", "expected a list of tests, got %s", describe(seq))
			continue
		}
		for i, item := range seq.Content {
			item = d.resolve(item)
			base := fmt.Sprintf("tests[%d]", i)
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
					case len(entries) == 1 && v0.Kind == yaml.MappingNode:
						// Nested layout: "- TCPStream: {profile: ...}".
						var t k8sNetperfTest
						d.decodeInto(v0, &t, base+"."+k0.Value)
						addK8sNetperf(d, p, lines, k0.Value, k0, base+"."+k0.Value, &t)
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
			addK8sNetperf(d, p, lines, name, nameNode, base, &t)
		}
	}
	return p
}

// addK8sNetperf appends one test as a group and indexes the group's plan paths to the lines of
// the fields they came from (base is the test's path in the file).
func addK8sNetperf(d *decoder, p *api.Plan, lines LineIndex, name string, nameNode *yaml.Node, base string, t *k8sNetperfTest) {
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
	profile := api.Profile(strings.ToUpper(strings.TrimSpace(t.Profile)))
	switch {
	case profile == "":
		d.errorf(nameNode, base+".profile", "missing profile (one of TCP_STREAM, UDP_STREAM, TCP_RR, UDP_RR, TCP_CRR)")
	default:
		g.Profiles = []api.Profile{profile}
		from("profiles", "profile")
		from("profiles[0]", "profile")
	}
	if t.Duration != "" {
		g.Duration = t.Duration
		from("duration", "duration")
	}
	if t.Samples != nil {
		g.Samples = t.Samples
		from("samples", "samples")
	}
	if t.MessageSize != nil {
		g.MessageSizes = []int{*t.MessageSize}
		from("messageSizes", "messagesize")
		from("messageSizes[0]", "messagesize")
	}
	if t.Parallelism != nil {
		g.Parallel = []int{*t.Parallelism}
		from("parallel", "parallelism")
		from("parallel[0]", "parallelism")
	}
	if t.Burst != nil {
		if *t.Burst > 0 && profile.Valid() && !profile.IsRR() {
			if pos, ok := d.lines[join(base, "burst")]; ok {
				d.warns = append(d.warns, FileError{Line: pos.Line, Column: pos.Column, Field: pos.Field,
					Message: fmt.Sprintf("burst %d applies only to request/response profiles; ignored for %s", *t.Burst, profile)})
			}
		} else if *t.Burst != 0 || profile.IsRR() {
			g.Burst = []int{*t.Burst}
			from("burst", "burst")
			from("burst[0]", "burst")
		}
	}
	if t.Service != nil {
		g.Service = t.Service
		from("service", "service")
	}
	p.Tests = append(p.Tests, g)
}

func itoa(i int) string { return strconv.Itoa(i) }
