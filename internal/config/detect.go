package config

import (
	"strings"

	"gopkg.in/yaml.v3"
)

const formatsHelp = "expected a cnperf plan (apiVersion: cnperf.dev/v1alpha1, kind: Plan), " +
	"a k8s-netperf netperf.yml (v1: a mapping of test names; v2: tests: [...]) " +
	"or a tiger-bench testconfig.yaml (a list of tests with testKind)"

// cnperfGroupKeys are keys only a cnperf test group has (k8s-netperf uses "profile", singular).
var cnperfGroupKeys = []string{"profiles", "paths", "drivers", "messageSizes", "warmup", "defaults"}

// detect tells the format of a document from its shape:
//   - apiVersion or kind at the top: cnperf;
//   - a top-level list whose entries have testKind (any case): tiger-bench;
//   - a top-level tests: list: k8s-netperf v2;
//   - a top-level mapping of names to mappings: k8s-netperf v1.
func detect(root *yaml.Node) (string, *FileError) {
	for root.Kind == yaml.AliasNode && root.Alias != nil {
		root = root.Alias
	}
	bad := func(n *yaml.Node, field, msg string) (string, *FileError) {
		return "", &FileError{Line: n.Line, Column: n.Column, Field: field, Message: msg}
	}
	switch root.Kind {
	case yaml.SequenceNode:
		if len(root.Content) == 0 {
			return bad(root, "", "empty list: "+formatsHelp)
		}
		for i, e := range root.Content {
			if e.Kind != yaml.MappingNode || !hasKeyFold(e, "testKind") {
				return bad(e, "["+itoa(i)+"]", "a top-level list is read as a tiger-bench testconfig.yaml, "+
					"but this entry has no testKind (dnsperf, iperf, thruput-latency or ttfr)")
			}
		}
		return FormatTigerBench, nil
	case yaml.MappingNode:
		if hasKey(root, "apiVersion") || hasKey(root, "kind") {
			return FormatCnperf, nil
		}
		if tests := value(root, "tests"); tests != nil && tests.Kind == yaml.SequenceNode {
			if k := cnperfLike(root, tests); k != nil {
				return bad(k, "", "this looks like a cnperf plan but has no apiVersion and kind: "+
					"add apiVersion: cnperf.dev/v1alpha1 and kind: Plan at the top")
			}
			return FormatK8sNetperfV2, nil
		}
		for i := 0; i+1 < len(root.Content); i += 2 {
			v := root.Content[i+1]
			for v.Kind == yaml.AliasNode && v.Alias != nil {
				v = v.Alias
			}
			if v.Kind != yaml.MappingNode {
				k := root.Content[i]
				return bad(k, k.Value, "a top-level mapping is read as a k8s-netperf netperf.yml (v1), "+
					"whose entries are tests (a name and its fields), but this entry is "+describe(v)+"; "+formatsHelp)
			}
		}
		return FormatK8sNetperfV1, nil
	}
	return bad(root, "", "got "+describe(root)+": "+formatsHelp)
}

// cnperfLike returns the first key that only a cnperf plan has, or nil.
func cnperfLike(root, tests *yaml.Node) *yaml.Node {
	if k := key(root, "defaults"); k != nil {
		return k
	}
	if k := key(root, "metadata"); k != nil {
		return k
	}
	for _, t := range tests.Content {
		if t.Kind != yaml.MappingNode {
			continue
		}
		for _, name := range cnperfGroupKeys {
			if k := key(t, name); k != nil {
				return k
			}
		}
	}
	return nil
}

func key(m *yaml.Node, name string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == name {
			return m.Content[i]
		}
	}
	return nil
}

func value(m *yaml.Node, name string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == name {
			v := m.Content[i+1]
			for v.Kind == yaml.AliasNode && v.Alias != nil {
				v = v.Alias
			}
			return v
		}
	}
	return nil
}

func hasKey(m *yaml.Node, name string) bool { return key(m, name) != nil }

func hasKeyFold(m *yaml.Node, name string) bool {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if strings.EqualFold(m.Content[i].Value, name) {
			return true
		}
	}
	return false
}
