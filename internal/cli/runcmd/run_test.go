package runcmd

// `cnperf run` is tested from its flags to its output and exit code with platformtest's fake
// platform, whose client answers with real iperf3 outputs captured in
// internal/driver/iperf3/testdata/captured (parsed by the real driver). It is a fake because a
// unit test can start no cluster and should not depend on the tools being installed; the
// real platforms under this command are tested in test/integration and test/e2e
// (TestKubeCLI*).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/iostreams"
	"github.com/cnperf/cnperf/internal/platform"
	"github.com/cnperf/cnperf/internal/platform/platformtest"
	"github.com/cnperf/cnperf/internal/runfile"
	"github.com/cnperf/cnperf/internal/text"
)

const testUUID = "6f0d5a8e-1c1e-4a39-9a56-0c1d2f3e4a5b"

func runCmd(t *testing.T, plat *platformtest.Platform, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	return runOpts(t, &Options{platform: plat}, args...)
}

// runOpts is runCmd with the command's options, to read what the flags set in them.
func runOpts(t *testing.T, o *Options, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	c := newCommand(iostreams.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errb}, o)
	c.SetArgs(args)
	c.SetOut(&errb)
	c.SetErr(&errb)
	err = c.ExecuteContext(context.Background())
	return out.String(), errb.String(), err
}

func TestRun(t *testing.T) {
	plan := []string{"--driver", "iperf3", "--profile", "TCP_STREAM", "--duration", "1s", "--samples", "2", "--no-progress"}
	tests := []struct {
		name     string
		capture  string
		args     []string
		wantCode int
		wantErr  string
		samples  int // samples of the one result printed (-1: nothing printed)
		failed   int
	}{
		{name: "measured", capture: "tcp_stream", args: []string{"--uuid", testUUID, "--label", "cni=fake"}, samples: 2},
		{name: "every sample refused: the case is printed and exit 1", capture: "refused", args: nil, samples: 2, failed: 2,
			wantCode: exit.Failed, wantErr: "1 of 1 cases failed:\n  case 1 (TCP_STREAM iperf3 pod-pod-cross-node): all 2 samples failed; first: "},
		{name: "bad uuid: nothing runs", capture: "tcp_stream", args: []string{"--uuid", "run-1"}, samples: -1,
			wantCode: exit.BadInput, wantErr: `--uuid: "run-1" is not a UUID`},
		{name: "bad label: nothing runs", capture: "tcp_stream", args: []string{"--label", "cni"}, samples: -1,
			wantCode: exit.BadInput, wantErr: `--label: "cni" is not KEY=VALUE`},
		{name: "bad plan: nothing runs", capture: "tcp_stream", args: []string{"--samples", "0"}, samples: -1,
			wantCode: exit.BadInput, wantErr: "invalid plan"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plat := &platformtest.Platform{T: t, Driver: "iperf3", Capture: tt.capture, Cluster: &api.ClusterDetails{CNI: "fake"}}
			results := filepath.Join(t.TempDir(), "run.jsonl")
			args := append(append(append([]string{}, plan...), "-o", "json", "--results", results), tt.args...)
			stdout, stderr, err := runCmd(t, plat, args...)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("error %v, want %q\nstderr: %s", err, tt.wantErr, stderr)
			}
			if code := exit.Code(err); code != tt.wantCode {
				t.Errorf("exit code %d, want %d", code, tt.wantCode)
			}
			prepared, closed, _ := plat.Counts()
			if tt.samples < 0 {
				if prepared != 0 || stdout != "" {
					t.Errorf("prepared %d times, stdout %q: bad input must run nothing", prepared, stdout)
				}
				return
			}
			if prepared != 1 || closed != 1 {
				t.Errorf("prepared %d, closed %d times, want once each", prepared, closed)
			}
			var printed api.Run // -o json prints one run as an object
			if err := json.Unmarshal([]byte(stdout), &printed); err != nil {
				t.Fatalf("stdout is not -o json: %v\n%s", err, stdout)
			}
			runs, err := runfile.Read(results)
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) != 1 {
				t.Fatalf("%d runs in the results file", len(runs))
			}
			for _, run := range []*api.Run{&printed, runs[0]} {
				if len(run.Results) != 1 {
					t.Fatalf("%d results", len(run.Results))
				}
				res := run.Results[0]
				if len(res.Samples) != tt.samples || res.Summary.SamplesFailed != tt.failed || run.Platform != "fake" ||
					run.Cluster == nil || run.Cluster.CNI != "fake" || run.Host == nil || run.EndTime.IsZero() {
					t.Errorf("run %s: %d samples (%d failed), platform %q, cluster %+v", run.UUID, len(res.Samples), res.Summary.SamplesFailed, run.Platform, run.Cluster)
				}
				if tt.name == "measured" && (run.UUID != testUUID || run.Labels["cni"] != "fake" || res.Summary.ThroughputBitsPerSecond == nil) {
					t.Errorf("run %s labels %v summary %+v", run.UUID, run.Labels, res.Summary)
				}
			}
		})
	}
}

// TestPlatformTraits: what a case defaults to, and what the output adds, follow the
// platform's traits, not its name.
func TestPlatformTraits(t *testing.T) {
	host := platform.Traits{DefaultPaths: []api.Path{api.PathLoopback}, HostOnly: true}
	for _, tc := range []struct {
		traits   *platform.Traits
		wantPath api.Path
	}{
		{traits: nil, wantPath: api.PathPodPodCrossNode},
		{traits: &host, wantPath: api.PathLoopback},
	} {
		plat := &platformtest.Platform{T: t, Driver: "iperf3", Capture: "tcp_stream", Described: tc.traits}
		stdout, stderr, err := runCmd(t, plat, "--driver", "iperf3", "--profile", "TCP_STREAM", "--duration", "1s", "--samples", "1", "-o", "json", "--no-progress")
		if err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		var run api.Run
		if err := json.Unmarshal([]byte(stdout), &run); err != nil {
			t.Fatalf("%v\n%s", err, stdout)
		}
		if len(run.Results) != 1 || run.Results[0].Path != tc.wantPath {
			t.Errorf("traits %+v: results %+v, want one on %s", tc.traits, run.Results, tc.wantPath)
		}
	}
}

// TestKubeOnlyFlagsRefusedElsewhere: k8s-netperf's network modes and --vm change what is
// measured, so on another platform they are a usage error naming the flag, before anything
// runs (--vm was accepted and ignored there: the run measured pods' loopback instead); a bare
// --vm followed by a role gets the hint to write --vm=ROLE.
func TestKubeOnlyFlagsRefusedElsewhere(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{args: []string{"--udnl2"}, wantErr: "--udnl2: only on the kube platform (it is k8s-netperf's, for a Kubernetes cluster), not on local"},
		{args: []string{"--vm"}, wantErr: "--vm=both: only on the kube platform (its endpoints are KubeVirt VMs), not on local"},
		{args: []string{"--vm=server"}, wantErr: "--vm=server: only on the kube platform"},
		// pflag reads "server" after a bare --vm as an argument
		{args: []string{"--vm", "server"}, wantErr: "--vm server: write --vm=server (--vm alone means both, as k8s-netperf's --vm)"},
	} {
		plat := &platformtest.Platform{T: t, Driver: "iperf3", Capture: "tcp_stream", PlatformName: "local"}
		args := append([]string{"--driver", "iperf3", "--profile", "TCP_STREAM", "--duration", "1s", "--samples", "1", "--no-progress"}, tc.args...)
		_, stderr, err := runCmd(t, plat, args...)
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) || exit.Code(err) != exit.BadInput {
			t.Errorf("%v: error %v (exit %d), want %q (exit %d)\n%s", tc.args, err, exit.Code(err), tc.wantErr, exit.BadInput, stderr)
		}
		if prepared, _, _ := plat.Counts(); prepared != 0 {
			t.Errorf("%v: prepared %d times, want nothing run", tc.args, prepared)
		}
	}
}

// TestVMOnSecondaryNetwork: VM endpoints with a secondary network flag: --network and
// --vm=both --bridge BRIDGE (k8s-netperf's: the run's own br-netperf definition on the nodes'
// bridge, static addresses from --bridgeNetwork) reach the platform; what cannot work (macvlan,
// the OVN-Kubernetes and SR-IOV networks, a pod endpoint on br-netperf, a bad --bridgeNetwork)
// is a usage error naming the flag as given, before anything runs.
func TestVMOnSecondaryNetwork(t *testing.T) {
	img := []string{"--vm-image", "localhost/cnperf-kubevirt/cnperf-guest:v1.0.1"}
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.json", `{"bridgeServerNetwork": "192.168.77.2/24", "bridgeClientNetwork": "192.168.77.3/24"}`)
	apart := write("apart.json", `{"bridgeServerNetwork": "192.168.77.2/24", "bridgeClientNetwork": "192.168.78.3/24"}`)
	unknown := write("unknown.json", `{"bridgeServerNetwork": "192.168.77.2/24", "serverNetwork": "x"}`)
	for _, tc := range []struct {
		args    []string
		wantErr string // "" when the run goes on
		// network, server, client: what the platform gets (with wantErr "")
		network, server, client string
		creates                 bool
	}{
		{args: append([]string{"--vm", "--bridge", "br0"}, img...), network: "cnperf/br-netperf", creates: true},
		{args: append([]string{"--vm", "--bridge", "br0", "--bridgeNetwork", good}, img...), network: "cnperf/br-netperf", creates: true,
			server: "192.168.77.2/24", client: "192.168.77.3/24"},
		{args: append([]string{"--vm", "--network", "multus-e2e/e2e-bridge"}, img...), network: "multus-e2e/e2e-bridge"},
		{args: append([]string{"--vm=server", "--bridge", "br0"}, img...),
			wantErr: "--vm=server with --bridge br0: the client pod would have no address on br-netperf"},
		{args: append([]string{"--vm", "--bridge", "br0", "--bridgeNamespace", "x"}, img...),
			wantErr: "--bridgeNamespace with --vm --bridge: with --vm, --bridge names the nodes' Linux bridge"},
		{args: append([]string{"--vm", "--bridge", "br0", "--bridgeNetwork", apart}, img...),
			wantErr: "bridgeServerNetwork 192.168.77.2/24 and bridgeClientNetwork 192.168.78.3/24 are not on the same network"},
		{args: append([]string{"--vm", "--bridge", "br0", "--bridgeNetwork", unknown}, img...),
			wantErr: `not k8s-netperf's bridgeNetwork JSON`},
		{args: []string{"--bridge", "br0", "--bridgeNetwork", good}, wantErr: "--bridgeNetwork: only with --vm"},
		{args: append([]string{"--vm=server", "--macvlan", "eth0"}, img...),
			wantErr: "--vm with --macvlan eth0: a VM joins a secondary network by KubeVirt's bridge binding"},
		{args: append([]string{"--vm=client", "--udnl2"}, img...), wantErr: "--vm with --udnl2: cnperf puts VMs on a NetworkAttachmentDefinition"},
		{args: append([]string{"--vm", "--cudn", "layer2"}, img...), wantErr: "--vm with --cudn layer2: cnperf puts VMs on a NetworkAttachmentDefinition"},
		{args: []string{"--vm=none", "--bridge", "br0"}, network: "default/br0"},
		{args: []string{"--bridge", "br0"}, network: "default/br0"},
	} {
		plat := &platformtest.Platform{T: t, Driver: "iperf3", Capture: "tcp_stream", PlatformName: "kube"}
		o := &Options{platform: plat}
		args := append([]string{"--driver", "iperf3", "--profile", "TCP_STREAM", "--duration", "1s", "--samples", "1", "--no-progress"}, tc.args...)
		_, stderr, err := runOpts(t, o, args...)
		if tc.wantErr == "" {
			k := o.Platforms.kube
			if o.Flags.Network != tc.network || (k.CreateNetwork != nil) != tc.creates || k.VMNetworkServer != tc.server || k.VMNetworkClient != tc.client {
				t.Errorf("%v: network %q (creates %v), addresses %q %q; want %q (%v), %q %q", tc.args, o.Flags.Network, k.CreateNetwork != nil,
					k.VMNetworkServer, k.VMNetworkClient, tc.network, tc.creates, tc.server, tc.client)
			}
			if exit.Code(err) == exit.BadInput {
				t.Errorf("%v: %v", tc.args, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) || exit.Code(err) != exit.BadInput {
			t.Errorf("%v: error %v (exit %d), want %q (exit %d)\n%s", tc.args, err, exit.Code(err), tc.wantErr, exit.BadInput, stderr)
		}
		if prepared, _, _ := plat.Counts(); prepared != 0 {
			t.Errorf("%v: prepared %d times, want nothing run", tc.args, prepared)
		}
	}
}

// TestRunTableOutput: -o table prints the table encoder's output of the run.
func TestRunTableOutput(t *testing.T) {
	plat := &platformtest.Platform{T: t, Driver: "iperf3", Capture: "tcp_stream"}
	stdout, stderr, err := runCmd(t, plat, "--driver", "iperf3", "--profile", "TCP_STREAM", "--duration", "1s", "--samples", "1")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	for _, want := range []string{"TCP_STREAM", "iperf3", "Gbit/s"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
	if !text.ContainsFolded(stderr, "case 1/1") {
		t.Errorf("no progress on stderr:\n%s", stderr)
	}
	var ue *exit.UsageError
	if errors.As(err, &ue) {
		t.Error(err)
	}
}

// TestDryRunTableFitsWidth: a dry run of every local path with a driver option is 146
// columns wide with every column (-o wide); the table view fits 120 (and 80 with COLUMNS=80)
// by moving each case's OTHER settings under the table, and hides GROUP and BURST when no
// case has one.
func TestDryRunTableFitsWidth(t *testing.T) {
	args := []string{"run", "--dry-run", "--platform", "local", "--path", "all", "--confidence", "95,5", "--option", "sendBuffer=1048576"}
	for _, tc := range []struct {
		format, columns string
		fit             int
		want, not       []string
	}{
		{"wide", "", 0, []string{"GROUP", "BURST", "OTHER", "sendBuffer=1048576 [underlay-bridge]"}, nil},
		{"table", "", 120, []string{"\n#2 sendBuffer=1048576 [underlay-bridge]\n", "SAMPLES"}, []string{"GROUP", "BURST", "OTHER"}},
		{"table", "80", 80, []string{"\n#2 sendBuffer=1048576 [underlay-bridge]\n"}, []string{"OTHER"}},
	} {
		t.Setenv("COLUMNS", tc.columns)
		var out, errb bytes.Buffer
		c := newCommand(iostreams.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errb}, &Options{})
		c.SetArgs(append(args[1:], "-o", tc.format))
		c.SetOut(&errb)
		c.SetErr(&errb)
		if err := c.ExecuteContext(context.Background()); err != nil {
			t.Fatalf("%s: %v\n%s", tc.format, err, errb.String())
		}
		s := out.String()
		widest := 0
		for _, l := range strings.Split(s, "\n") {
			widest = max(widest, utf8.RuneCountInString(l))
		}
		if tc.fit > 0 && widest > tc.fit || tc.fit == 0 && widest <= 120 {
			t.Errorf("-o %s COLUMNS=%q: widest line %d columns (fit %d):\n%s", tc.format, tc.columns, widest, tc.fit, s)
		}
		for _, w := range tc.want {
			if !strings.Contains(s, w) {
				t.Errorf("-o %s COLUMNS=%q lacks %q:\n%s", tc.format, tc.columns, w, s)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(s, w) {
				t.Errorf("-o %s COLUMNS=%q has %q:\n%s", tc.format, tc.columns, w, s)
			}
		}
	}
}

// TestFailedCasesFit: the closing "N of M cases failed" lines fit 120 columns whatever the
// cause (a refused server's cause is its whole usage text, ~810 columns on one line before),
// cut with "…", and a short cause stays whole on its line.
func TestFailedCasesFit(t *testing.T) {
	usage := "place endpoints: sockperf server \"sockperf-tcp-v6\" has exited: sockperf: '-i' Invalid address: ::\n" +
		strings.Repeat("  --option\tDisplay what this option does in a long line of help text.\n", 12)
	run := &api.Run{Results: []api.Result{
		{Profile: api.TCPRR, Driver: "sockperf", Path: api.PathPodPodCrossNode, Error: usage},
		{Profile: api.TCPRR, Driver: "sockperf", Path: api.PathHostHost, Error: "no route to host"},
	}}
	err := failedCases(run)
	if err == nil {
		t.Fatal("two failed cases, no error")
	}
	msg := "cnperf: " + err.Error()
	for _, l := range strings.Split(msg, "\n") {
		if n := utf8.RuneCountInString(l); n > 120 {
			t.Errorf("%d columns: %q", n, l)
		}
	}
	for _, want := range []string{"2 of 2 cases failed:\n  case 1 (TCP_RR sockperf pod-pod-cross-node): place endpoints:",
		"Invalid address: ::", "…", "\n  case 2 (TCP_RR sockperf host-host): no route to host"} {
		if !strings.Contains(msg, want) {
			t.Errorf("missing %q in:\n%s", want, msg)
		}
	}
}

// TestDryRunSaysVMs: a kube dry run with --vm says, under the platform, which endpoints would be
// KubeVirt VMs with their image, binding, vCPUs (and topology) and memory, in lines that fit the
// width; without --vm it says nothing of VMs.
func TestDryRunSaysVMs(t *testing.T) {
	img := "localhost/cnperf-kubevirt/cnperf-guest:v1.0.1"
	base := []string{"--dry-run", "--platform", "kube", "--driver", "native", "--profile", "TCP_RR", "--path", "pod-pod-cross-node"}
	for _, tc := range []struct {
		args    []string
		columns string
		want    string // the notes under "platform: kube", wrapped lines joined with a space
	}{
		{nil, "", ""},
		{[]string{"--vm=server", "--vm-image", img, "--cores", "2"}, "",
			"the server is a VM (KubeVirt): image " + img + ", masquerade binding, 2 vCPUs (sockets 1, cores 2, threads 1), 512Mi memory"},
		{[]string{"--vm", "--vm-image", img, "--pod-labels", "team=net"}, "",
			"every pod gets labels team=net the server and the client are VMs (KubeVirt): image " + img +
				", masquerade binding, 1 vCPU (sockets 1, cores 1, threads 1), 512Mi memory"},
		{[]string{"--vm=client", "--vm-image", img, "--vm-binding", "bridge", "--sockets", "2", "--threads", "2", "--vm-memory", "1Gi"}, "80",
			"the client is a VM (KubeVirt): image " + img + ", bridge binding, 4 vCPUs (sockets 2, cores 1, threads 2), 1Gi memory"},
		// k8s-netperf's --use-virtctl: accepted with --vm, and said to change nothing
		{[]string{"--vm=server", "--vm-image", img, "--use-virtctl"}, "",
			"the server is a VM (KubeVirt): image " + img + ", masquerade binding, 1 vCPU (sockets 1, cores 1, threads 1), 512Mi memory; " +
				"--use-virtctl changes nothing here: k8s-netperf reaches its guests by ssh or virtctl ssh; cnperf has no SSH in its guests " +
				"and reaches their agent through the relay pod (docs/vm.md)"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Setenv("COLUMNS", tc.columns)
			var out, errb bytes.Buffer
			c := newCommand(iostreams.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errb}, &Options{})
			c.SetArgs(append(slices.Clone(base), tc.args...))
			c.SetOut(&errb)
			c.SetErr(&errb)
			if err := c.ExecuteContext(context.Background()); err != nil {
				t.Fatalf("%v\n%s", err, errb.String())
			}
			lines := strings.Split(out.String(), "\n")
			fit := 120
			if tc.columns != "" {
				fit, _ = strconv.Atoi(tc.columns)
			}
			for i, l := range lines {
				if n := utf8.RuneCountInString(l); n > fit {
					t.Errorf("line %d has %d columns (fit %d): %s", i+1, n, fit, l)
				}
			}
			if lines[0] != "platform: kube" {
				t.Fatalf("first line %q", lines[0])
			}
			var notes []string
			for _, l := range lines[1:] {
				if strings.HasPrefix(l, "#") {
					break
				}
				notes = append(notes, strings.TrimSpace(l))
			}
			if got := strings.Join(notes, " "); got != tc.want {
				t.Errorf("notes under the platform:\n%q\nwant\n%q\n%s", got, tc.want, out.String())
			}
		})
	}
}

// TestToleranceErrorFitsTheTerminal: --tolerance's failure names each violation in lines of at
// most 120 columns, as the table before it (one violation was one line of about 230).
func TestToleranceErrorFitsTheTerminal(t *testing.T) {
	stat := func(mean float64) *api.Stat {
		return &api.Stat{N: 3, Mean: mean, Median: mean, CI95Low: mean * 0.6, CI95High: mean * 1.4}
	}
	p := api.Params{MessageSizeBytes: 1, Parallel: 1}
	run := &api.Run{Results: []api.Result{
		{Profile: api.TCPRR, Driver: "native", Path: api.PathHostHost, Params: p, Summary: api.Summary{TransactionsPerSecond: stat(48.09e3)}},
		{Profile: api.TCPRR, Driver: "native", Path: api.PathPodPodCrossNode, Params: p, Summary: api.Summary{TransactionsPerSecond: stat(25.18e3)}},
	}}
	for _, pct := range []float64{25, 10} {
		var log bytes.Buffer
		err := (&platformOptions{tolerance: pct}).gate(run, &log)
		if err == nil {
			t.Fatalf("--tolerance %v: no error", pct)
		}
		for _, l := range strings.Split(log.String()+err.Error(), "\n") {
			if n := len([]rune(l)); n > 120 {
				t.Errorf("--tolerance %v: a line of %d columns: %s", pct, n, l)
			}
		}
		if !strings.Contains(err.Error(), "\n  TCP_RR native host-host vs pod-pod-cross-node (1B x1): pod network 25.18 k trans/s is 47.6% slower") ||
			!strings.Contains(err.Error(), "\n    ") {
			t.Errorf("--tolerance %v: %v", pct, err)
		}
	}
}

// TestFailedCases: the exit error of a run with failed cases names each (number, profile, driver,
// path) with its cause, the case's error or how many of its samples failed; a run without one
// is no error.
func TestFailedCases(t *testing.T) {
	ok := api.Result{Profile: api.TCPStream, Driver: "native", Path: api.PathLoopback, Summary: api.Summary{SamplesTotal: 2}}
	partial := api.Result{Profile: api.TCPRR, Driver: "netperf", Path: api.PathPodPodCrossNode,
		Summary: api.Summary{SamplesTotal: 3, SamplesFailed: 1}}
	failed := api.Result{Profile: api.UDPStream, Driver: "iperf3", Path: api.PathHostHost, Error: "no server answered",
		Summary: api.Summary{SamplesTotal: 2, SamplesFailed: 2}}
	if err := failedCases(&api.Run{Results: []api.Result{ok}}); err != nil {
		t.Errorf("no failed case: %v", err)
	}
	err := failedCases(&api.Run{Results: []api.Result{ok, partial, failed}})
	want := "2 of 3 cases failed:\n  case 2 (TCP_RR netperf pod-pod-cross-node): 1 of 3 samples failed\n" +
		"  case 3 (UDP_STREAM iperf3 host-host): no server answered"
	if err == nil || err.Error() != want || exit.Code(err) != exit.Failed {
		t.Errorf("got %v (exit code %d)\nwant %s", err, exit.Code(err), want)
	}
}
