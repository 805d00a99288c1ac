package kube

import (
	"maps"
	"strings"
	"testing"
)

func TestParsePodMetadata(t *testing.T) {
	big := strings.Repeat("x", 300<<10)
	tests := []struct {
		name                string
		labels, annotations []string
		want                string // PodMetadata.String()
		err                 string
	}{
		{name: "none"},
		{name: "labels and annotations", labels: []string{"team=net", "example.com/tier=perf"},
			annotations: []string{"sidecar.istio.io/inject=false", "note=a b, c"},
			want:        "labels example.com/tier=perf,team=net; annotations note=a b, c,sidecar.istio.io/inject=false"},
		{name: "empty value", labels: []string{"flag="}, want: "labels flag="},
		{name: "cnperf's run label", labels: []string{"cnperf.dev/run=x"}, err: `--pod-labels "cnperf.dev/run=x": cnperf.dev/run is cnperf's own key`},
		{name: "managed-by", labels: []string{"app.kubernetes.io/managed-by=helm"}, err: "app.kubernetes.io/managed-by is cnperf's own key"},
		{name: "an annotation in cnperf's prefix", annotations: []string{"cnperf.dev/x=1"}, err: `--pod-annotations "cnperf.dev/x=1": cnperf.dev/x is cnperf's own key`},
		{name: "other app.kubernetes.io labels are the user's", labels: []string{"app.kubernetes.io/part-of=bench"}, want: "labels app.kubernetes.io/part-of=bench"},
		{name: "no value", labels: []string{"team"}, err: `--pod-labels "team": want KEY=VALUE`},
		{name: "no key", annotations: []string{"=x"}, err: `--pod-annotations "=x": want KEY=VALUE`},
		{name: "bad key", labels: []string{"bad key=x"}, err: `key "bad key": name part must consist of alphanumeric`},
		{name: "bad label value", labels: []string{"team=a b"}, err: `value "a b": a valid label must be`},
		{name: "annotation values are free", annotations: []string{"team=a b"}, want: "annotations team=a b"},
		{name: "twice", labels: []string{"team=a", "team=b"}, err: "--pod-labels: key team given twice"},
		{name: "annotations too large", annotations: []string{"big=" + big}, err: "--pod-annotations: Too long: may not be"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ParsePodMetadata(tt.labels, tt.annotations)
			if (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
				t.Fatalf("err = %v, want %q", err, tt.err)
			}
			if err == nil && m.String() != tt.want {
				t.Errorf("String() = %q, want %q", m.String(), tt.want)
			}
		})
	}
}

// TestPodOptionsMetadata: the user's labels and annotations are on the pod and on a
// DaemonSet's template, beside cnperf's own labels, and the options' maps are not changed.
func TestPodOptionsMetadata(t *testing.T) {
	m, err := ParsePodMetadata([]string{"team=net"}, []string{"sidecar.istio.io/inject=false"})
	if err != nil {
		t.Fatal(err)
	}
	own := RunLabels("run-1")
	o := PodOptions{Name: "p", Namespace: "ns", Labels: own, Metadata: m}
	p := o.Pod()
	want := maps.Clone(own)
	want["team"] = "net"
	if !maps.Equal(p.Labels, want) || p.Annotations["sidecar.istio.io/inject"] != "false" || len(p.Annotations) != 1 {
		t.Errorf("labels %v annotations %v", p.Labels, p.Annotations)
	}
	if _, leaked := own["team"]; leaked {
		t.Error("the options' own labels map was changed")
	}
	if tm := (PodOptions{Labels: own}).ObjectMeta(); len(tm.Annotations) != 0 || len(tm.Labels) != len(own) {
		t.Errorf("without metadata: %+v", tm)
	}
}
