package meshcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/iostreams"
	"github.com/cnperf/cnperf/internal/measure"
	"github.com/cnperf/cnperf/internal/runfile"
	"github.com/cnperf/cnperf/internal/session"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"
)

// parse runs the command's flag parsing and validation only.
func parse(t *testing.T, args ...string) (*Options, *settings, error) {
	t.Helper()
	o := &Options{}
	var out bytes.Buffer
	c := newCommand(iostreams.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &out}, o)
	if err := c.ParseFlags(args); err != nil {
		return nil, nil, err
	}
	s, err := o.validate()
	return o, s, err
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // "" = valid
	}{
		{nil, ""},
		{[]string{"--profile", "tcp_rr", "--network", "pod,host"}, ""},
		{[]string{"--all-to-one", "node1", "--via", "direct,service", "--concurrent"}, ""},
		{[]string{"--output", "xml"}, `output format "xml", allowed formats are: table,csv,cells,json,yaml`},
		{[]string{"--profile", "SCTP"}, "--profile"},
		{[]string{"--driver", "nosuch"}, "--driver"},
		{[]string{"--duration", "0s"}, "--duration"},
		{[]string{"--network", "overlay"}, "--network"},
		{[]string{"--via", "service"}, "apply to --all-to-one"},
		{[]string{"--concurrent"}, "apply to --all-to-one"},
		{[]string{"--all-to-one", "n1", "--pairs", "3"}, "apply to the mesh"},
		{[]string{"--all-to-one", "n1", "--via", "nodeport"}, "--via"},
		{[]string{"--metric", "bogus"}, "--metric"},
		{[]string{"--outlier-mads", "0"}, "--outlier-mads"},
		{[]string{"--image-pull-policy", "Sometimes"}, "--image-pull-policy"},
		{[]string{"--tolerations", "k=v:Maybe"}, "effect"},
		{[]string{"--option", "novalue"}, "KEY=VALUE"},
		{[]string{"--port", "70000"}, "--port"},
	} {
		_, _, err := parse(t, tc.args...)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%v: %v", tc.args, err)
			}
			continue
		}
		var ue *exit.UsageError
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.As(err, &ue) {
			t.Errorf("%v: error %v, want a usage error mentioning %q", tc.args, err, tc.want)
		}
	}
}

func TestValidateSettings(t *testing.T) {
	_, s, err := parse(t, "--profile", "TCP_RR", "--network", "host,pod,host", "--tolerations", "*", "--option", "cpu=0,1")
	if err != nil {
		t.Fatal(err)
	}
	if s.metric.Name != "latency-p50" || len(s.networks) != 2 || s.networks[0] != "host" || len(s.tols) != 1 || s.params.Options["cpu"] != "0,1" {
		t.Fatalf("%+v", s)
	}
}

func TestResultsFileKeepsMesh(t *testing.T) {
	v := 9.5e9
	run := &api.Run{APIVersion: api.APIVersion, Kind: api.KindRun, UUID: "6f0d5a8e-1c1e-4a39-9a56-0c1d2f3e4a5b", Platform: "kube",
		Results: []api.Result{
			{Profile: api.TCPStream, Driver: "native", Path: api.PathPodPodCrossNode, Samples: []api.Sample{}},
			{Profile: api.TCPStream, Driver: "native", Path: api.PathPodPodCrossNode, Samples: []api.Sample{}, Error: "boom"},
		},
		Mesh: &api.Mesh{Mode: "mesh", Nodes: []string{"a", "b"}, Profile: api.TCPStream, Driver: "native", Metric: "throughputBitsPerSecond",
			Matrices: []api.MeshMatrix{{Network: "pod", Cells: []api.MeshCell{
				{Client: "a", Server: "b", Result: 0, Value: &v}, {Client: "b", Server: "a", Round: 1, Result: 1, Error: "boom"}}}}},
	}
	path := filepath.Join(t.TempDir(), "mesh.jsonl")
	if err := session.WriteFile(path, run); err != nil {
		t.Fatal(err)
	}
	runs, err := runfile.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Mesh == nil || len(runs[0].Results) != 2 {
		t.Fatalf("read back %d runs: %+v", len(runs), runs)
	}
	got := runs[0].Mesh.Matrices[0].Cells
	if len(got) != 2 || *got[0].Value != v || runs[0].Results[got[1].Result].Error != "boom" {
		t.Fatalf("cells %+v", got)
	}
}

// TestDryRunListsTheScheduleAndCreatesNothing: --dry-run reads the nodes (a list, nothing
// else) and prints every pair of the schedule. The API server is client-go's fake: the test
// is about which calls are made, and a real cluster cannot run in a unit test.
func TestDryRunListsTheScheduleAndCreatesNothing(t *testing.T) {
	node := func(name string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
				Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}}}}
	}
	for _, tc := range []struct {
		args  []string
		pairs int
		want  []string
	}{
		{[]string{"--dry-run"}, 6, []string{"nodes: a, b, c", "ROUND  CLIENT  SERVER  NETWORK  VIA",
			"6 measurements in 6 rounds, TCP_STREAM with native, 1 samples of 10s each"}},
		{[]string{"--dry-run", "--network", "pod,host"}, 12, []string{"12 measurements in 6 rounds"}},
		{[]string{"--dry-run", "--confidence", "95,5", "--samples", "3,20"}, 6,
			[]string{"6 measurements in 6 rounds, TCP_STREAM with native, 3-20 samples of 10s each until ±5% at 95%"}},
		{[]string{"--dry-run", "--all-to-one", "b", "--via", "direct,service"}, 6, []string{"1      a       b       pod      direct", "6 measurements in 6 rounds"}},
		{[]string{"--dry-run", "-o", "json", "--all-to-one", "b", "--concurrent"}, 3, nil},
		{[]string{"--dry-run", "-o", "yaml", "--all-to-one", "b", "--concurrent"}, 3, nil},
	} {
		o, s, err := parse(t, tc.args...)
		if err != nil {
			t.Fatal(err)
		}
		cs := fake.NewClientset(node("a"), node("b"), node("c"))
		var out, errb bytes.Buffer
		err = o.run(context.Background(), iostreams.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errb}, &errb, s, "1a2b3c4d-0000-0000-0000-000000000000", cs, nil)
		if err != nil {
			t.Fatalf("%v: %v\n%s", tc.args, err, errb.String())
		}
		for _, a := range cs.Actions() {
			if a.GetVerb() != "list" || a.GetResource().Resource != "nodes" {
				t.Errorf("%v: dry run made a %s %s call", tc.args, a.GetVerb(), a.GetResource().Resource)
			}
		}
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%v: output lacks %q:\n%s", tc.args, w, out.String())
			}
		}
		if o.Output == "json" || o.Output == "yaml" {
			var pairs []DryRunPair
			data := out.Bytes()
			if o.Output == "yaml" {
				if data, err = yaml.YAMLToJSON(data); err != nil {
					t.Fatalf("%v: not YAML: %v\n%s", tc.args, err, out.String())
				}
			}
			if err := json.Unmarshal(data, &pairs); err != nil || len(pairs) != tc.pairs || pairs[2].Round != 0 {
				t.Errorf("%v: %d pairs (%v):\n%s", tc.args, len(pairs), err, out.String())
			}
		} else if n := strings.Count(out.String(), "\n") - 3; n != tc.pairs {
			t.Errorf("%v: %d pair lines, want %d:\n%s", tc.args, n, tc.pairs, out.String())
		}
	}
	if _, _, err := parse(t, "-o", "jsn"); err == nil || !strings.Contains(err.Error(), `did you mean "json"`) {
		t.Errorf("-o jsn: %v", err)
	}
	if _, _, err := parse(t, "--dry-run", "-o", "csv"); err == nil {
		t.Error("--dry-run -o csv accepted")
	}
	if _, _, err := parse(t, "--parallel", "300"); err == nil || !strings.Contains(err.Error(), "--parallel: parallel 300 is more than the native driver runs (at most 256 flows)") {
		t.Errorf("--parallel 300: %v", err)
	}
}

// TestResultsFileUnwritableRefusedFirst: a --results file that cannot be created is bad
// input (exit code 2) found before anything is created in the cluster, not an error after the
// whole mesh was measured. The API server is client-go's fake (which calls are made).
func TestResultsFileUnwritableRefusedFirst(t *testing.T) {
	node := func(name string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
				Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}}}}
	}
	path := filepath.Join(t.TempDir(), "no-such-dir", "mesh.jsonl")
	o, s, err := parse(t, "--results", path)
	if err != nil {
		t.Fatal(err)
	}
	cs := fake.NewClientset(node("a"), node("b"))
	var out, errb bytes.Buffer
	err = o.run(context.Background(), iostreams.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errb}, &errb, s,
		"1a2b3c4d-0000-0000-0000-000000000000", cs, nil)
	if err == nil || exit.Code(err) != exit.BadInput || !strings.Contains(err.Error(), "--results") {
		t.Fatalf("error %v (exit code %d), want --results refused with exit code %d", err, exit.Code(err), exit.BadInput)
	}
	for _, a := range cs.Actions() {
		if a.GetVerb() != "list" && a.GetVerb() != "get" {
			t.Errorf("a %s %s call before the refusal", a.GetVerb(), a.GetResource().Resource)
		}
	}
}

// A secondary network as `cnperf run` takes it: --network NAMESPACE/NAME (beside pod or host),
// k8s-netperf's --bridge (with --bridgeNamespace) and --macvlan (its definition, in the mesh's
// namespace), one a run, reached directly; k8s-netperf's modes cnperf cannot measure are refused
// as in run.
func TestValidateSecondaryNetwork(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		networks string // the matrices' networks
		create   string // the definition --macvlan creates
		wantErr  string
	}{
		{args: []string{"--network", "multus-e2e/e2e-bridge"}, networks: "multus-e2e/e2e-bridge"},
		{args: []string{"--network", "pod,multus-e2e/e2e-bridge"}, networks: "pod multus-e2e/e2e-bridge"},
		{args: []string{"--bridge", "e2e-bridge", "--bridgeNamespace", "multus-e2e"}, networks: "multus-e2e/e2e-bridge"},
		{args: []string{"--bridge", "br-netperf"}, networks: "default/br-netperf"},
		{args: []string{"--network", "pod", "--bridge", "e2e-bridge", "--bridgeNamespace", "multus-e2e"}, networks: "pod multus-e2e/e2e-bridge"},
		{args: []string{"--macvlan", "eth0", "-n", "perf"}, networks: "perf/macvlan-netperf",
			create: `{"cniVersion": "0.3.1", "type": "macvlan", "master": "eth0", "mode": "bridge", "ipam": {"type": "whereabouts", "range": "192.168.200.0/24"}}`},
		{args: []string{"--all-to-one", "node1", "--network", "multus-e2e/e2e-macvlan"}, networks: "multus-e2e/e2e-macvlan"},
		{args: []string{"--network", "a/x,b/y"}, wantErr: "--network: a/x and b/y: a mesh measures on one secondary network"},
		{args: []string{"--network", "a/Bad_Name"}, wantErr: `--network: network "a/Bad_Name": name "Bad_Name" is not a DNS subdomain`},
		{args: []string{"--network", "a/x", "--bridge", "y"}, wantErr: "--bridge and --network: give one"},
		{args: []string{"--macvlan", "eth0", "--network", "a/x"}, wantErr: "--macvlan and --network: give one"},
		{args: []string{"--udnl2"}, wantErr: "--udnl2: a network OVN-Kubernetes or the SR-IOV Network Operator must provide, which cnperf does not create"},
		{args: []string{"--all-to-one", "node1", "--via", "direct,service", "--network", "a/x"},
			wantErr: "--via service and secondary network a/x: a Service's address is on the cluster's own network"},
		{args: []string{"--network", "a/x", "--pod-annotations", "k8s.v1.cni.cncf.io/networks=[{"}, wantErr: "is not a JSON list of network selection elements"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, s, err := parse(t, tc.args...)
			if tc.wantErr != "" {
				var ue *exit.UsageError
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.As(err, &ue) {
					t.Fatalf("error %v, want a usage error with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(s.networkNames(), " "); got != tc.networks {
				t.Errorf("networks %q, want %q", got, tc.networks)
			}
			var create string
			if s.network != nil && s.network.Create != nil {
				create = s.network.Create.Config
			}
			if create != tc.create {
				t.Errorf("definition to create %q, want %q", create, tc.create)
			}
		})
	}
}

// TestOutputHasTheTeardown: mesh writes its run after the clean-up, as cnperf run does, so the
// output and the results file have the teardown's time (internal/measure's timing, as run's);
// the mesh was written during the measurement before, without it. A unit whose Close takes
// 50 ms stands for the agents' removal (a real one needs a cluster: the e2e tests).
func TestOutputHasTheTeardown(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mesh.jsonl")
	o := &Options{Output: "json", ResultsFile: path}
	var out bytes.Buffer
	closed := false
	run := session.NewRun(session.Header{UUID: "1a2b3c4d-0000-0000-0000-000000000000", Platform: "kube"})
	err := session.Do(context.Background(), run, path, func(sess *session.Session) error {
		return o.measureAndWrite(context.Background(), sess, &out, measureUnit(sess, &closed))
	})
	if !errors.Is(err, errPairs) {
		t.Fatalf("error %v, want the measurement's", err)
	}
	var got api.Run
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || got.Mesh == nil || got.Timing == nil {
		t.Fatalf("output (%v):\n%s", err, out.String())
	}
	if !closed || got.Timing.TeardownSeconds < 0.05 || got.Timing.MeasureSeconds < 0.02 {
		t.Errorf("closed %v, timing %+v: want a teardown of at least 50 ms and a measurement of 20 ms", closed, *got.Timing)
	}
	runs, err := runfile.Read(path)
	if err != nil || len(runs) != 1 || runs[0].Timing == nil || runs[0].Timing.TeardownSeconds < 0.05 {
		t.Errorf("results file: %v, %+v", err, runs)
	}

	// a unit that measured nothing writes nothing
	out.Reset()
	run = session.NewRun(session.Header{UUID: "1a2b3c4d-0000-0000-0000-000000000001", Platform: "kube"})
	prepErr := errors.New("no agent started")
	err = session.Do(context.Background(), run, "", func(sess *session.Session) error {
		return o.measureAndWrite(context.Background(), sess, &out, measure.Unit{Prepare: func(context.Context) error { return prepErr }})
	})
	if !errors.Is(err, prepErr) || out.Len() != 0 {
		t.Errorf("failed set-up: %v, output %q", err, out.String())
	}
}

var errPairs = errors.New("1 pair(s) failed")

func measureUnit(sess *session.Session, closed *bool) measure.Unit {
	return measure.Unit{
		Measure: func(context.Context) error {
			time.Sleep(20 * time.Millisecond) // the work whose length the run's timing must hold (a lower bound only)
			sess.Run.Mesh = &api.Mesh{}
			return errPairs
		},
		Close: func(context.Context) error {
			time.Sleep(50 * time.Millisecond) // likewise, the teardown's
			*closed = true
			return nil
		},
	}
}
