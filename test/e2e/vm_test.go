//go:build e2e

// VMs as endpoints, for real: on a cluster with KubeVirt (make e2e KUBEVIRT=1, which runs
// test/e2e/harness/kubevirt.sh up; KubeVirt in QEMU's software emulation there), cnperf --vm
// runs the native and netperf drivers pod → VM, VM → pod and VM ↔ VM on one node and across
// nodes, with the masquerade, bridge and passt bindings, and k8s-netperf's netperf.yml with --vm
// gives the same cases as with pods; nothing is left behind (no VirtualMachineInstance or
// virt-launcher pod).
package e2e

import (
	"cmp"
	"context"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/agenttoken"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/runfile"
)

// vmGuestImage is the cnperf guest kubevirt.sh build makes and kubevirt.sh up imports.
const vmGuestImage = "localhost/cnperf-kubevirt/cnperf-guest:v1.0.1"

// TestKubeVirtVMs: TCP_STREAM and TCP_RR (native and netperf in one run, 2 s, one sample: the
// guests are emulated) with the server a VM (pod → VM: a server VM per driver, netserver
// started in its guest through the exec port), the client a VM (VM → pod: netperf's client run
// in the guest, its output parsed by the netperf driver) and both endpoints VMs (VM ↔ VM), each
// on pod-pod-same-node and pod-pod-cross-node (a client VM or pod on each node), for each binding
// (bridge skips where the kernel has no dummy link type, passt where KubeVirt's Passt feature
// gate is off). Every case passes with a positive figure; the
// results say which endpoints are VMs, their binding, vCPUs and that they are emulated; each
// case's client and server are on one node or two as its path says; the run's VMIs, read from
// the API server while it runs, hold no token; afterwards no VMI, launcher pod or other object
// of the run is left.
func TestKubeVirtVMs(t *testing.T) {
	cl := kpClusterFromEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	kv := kube.CheckKubeVirt(ctx, cl.cs)
	if kv.Missing != "" {
		t.Skipf("%s; make e2e KUBEVIRT=1 installs it (test/e2e/harness/kubevirt.sh up; CI's cluster has none)", kv.Missing)
	}
	emulated := kv.Emulated
	image := cmp.Or(os.Getenv("CNPERF_E2E_VM_IMAGE"), vmGuestImage)
	t.Run("schema", func(t *testing.T) { vmDryRun(ctx, t, cl, image) })
	// the paths of each role's run: a VM server serves a client pod on its node and one on the
	// other; a client VM on the server pod's node and one on the other; with both, a client VM
	// on each node talks to the server VMs
	paths := []api.Path{api.PathPodPodSameNode, api.PathPodPodCrossNode}
	drivers := []string{"native", "netperf"}
	for _, binding := range kube.Bindings {
		for _, vm := range []string{"server", "client", "both"} {
			t.Run(binding+"/"+vm, func(t *testing.T) {
				switch binding {
				case kube.BindingBridge:
					vmNeedDummy(t)
				case kube.BindingPasst:
					vmNeedPasstGate(ctx, t, cl, image)
				}
				runID := uuid.NewString()
				ns := kpNamespace("cnperf-e2e-vm")
				results := filepath.Join(t.TempDir(), "run.jsonl")
				tok, err := agenttoken.New()
				if err != nil {
					t.Fatal(err)
				}
				t.Setenv(agenttoken.Env, tok) // the run's token, to look for in its VMIs
				seen := vmWatchVMIs(ctx, t, cl, ns, runID, tok)
				start := time.Now()
				out, stderr, code := kpRunCLI(ctx, "run", "--platform", "kube", "--kubeconfig", cl.kubeconfig, "-n", ns, "--uuid", runID,
					"--image", agentImage(), "--vm="+vm, "--vm-image", image, "--vm-binding", binding,
					"--driver", strings.Join(drivers, ","), "--profile", "TCP_STREAM,TCP_RR", "--path", plan.Join(paths),
					"--duration", "2s", "--samples", "1", "--results", results, "-o", "table")
				t.Logf("cnperf --vm %s --vm-binding %s: exit %d in %.0fs, stderr:\n%s\nstdout:\n%s", vm, binding, code,
					time.Since(start).Seconds(), stderr, out)
				// a VM server per driver; a VM client per client node
				if n, want := seen(), map[string]int{"server": 2, "client": 2, "both": 4}[vm]; n != want {
					t.Errorf("read %d of the run's VMIs while it ran, want %d", n, want)
				}
				if code != exit.OK {
					t.Fatalf("cnperf exited %d", code)
				}
				runs, _, err := runfile.ReadWarnings(results)
				if err != nil || len(runs) != 1 || len(runs[0].Results) != 2*len(paths)*len(drivers) {
					t.Fatalf("results file: %v (%d runs)", err, len(runs))
				}
				for _, r := range runs[0].Results {
					vmCheck(t, r, vm, binding, emulated)
				}
				if c := runs[0].Cluster; c == nil || c.KubeVirt == nil || c.KubeVirt.Emulated != emulated || c.KubeVirt.Version == "" {
					t.Errorf("cluster details: KubeVirt %+v, want its version and emulated %v", c, emulated)
				}
				if emulated && !strings.Contains(out, "software emulation") {
					t.Error("the table does not say the VMs were emulated")
				}
				vmNothingLeft(ctx, t, cl, runID)
			})
		}
	}
}

// vmWatchVMIs reads the run's VMIs from the API server while it runs, as anyone who may get VMIs
// can, and fails the test when one holds the run's token, or does not name the run's token Secret
// as a disk (how the guest gets the token). It returns a function that stops the watch and says
// how many of the run's VMIs it read.
func vmWatchVMIs(ctx context.Context, t *testing.T, cl kpCluster, ns, runID, tok string) func() int {
	t.Helper()
	vmis := kube.RESTVMIs{CS: cl.cs}
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	read := map[string]bool{}
	go func() {
		defer close(done)
		for wctx.Err() == nil {
			metas, _ := vmis.List(wctx, ns, kube.RunSelector(runID))
			for _, m := range metas {
				if read[m.Name] {
					continue
				}
				raw, err := vmis.Get(wctx, ns, m.Name)
				if err != nil {
					continue
				}
				read[m.Name] = true
				if strings.Contains(string(raw), tok) {
					t.Errorf("VMI %s/%s holds the run's agent token", ns, m.Name)
				}
				var v struct {
					Spec struct {
						Volumes []struct {
							Secret struct {
								SecretName string `json:"secretName"`
							} `json:"secret"`
						} `json:"volumes"`
					} `json:"spec"`
				}
				if err := json.Unmarshal(raw, &v); err != nil || len(v.Spec.Volumes) != 1 ||
					v.Spec.Volumes[0].Secret.SecretName != kube.TokenSecretName(runID) {
					t.Errorf("VMI %s/%s: volumes %+v (%v), want the run's token Secret %s", ns, m.Name, v.Spec.Volumes, err,
						kube.TokenSecretName(runID))
				} else {
					t.Logf("VMI %s/%s, as the API server returns it: no token, its volume the Secret %s", ns, m.Name,
						kube.TokenSecretName(runID))
				}
			}
			select {
			case <-wctx.Done():
			case <-time.After(2 * time.Second):
			}
		}
	}()
	return func() int {
		cancel()
		<-done
		return len(read)
	}
}

// vmDryRunVMI is the VMI of the server-side dry runs (nothing is created).
func vmDryRunVMI(image, binding string) kube.VMOptions {
	return kube.VMOptions{Name: "cnperf-dry-run", Namespace: "default", Labels: map[string]string{kube.LabelRun: "dry-run"},
		Nodes: []string{"node1"}, Image: image, PullPolicy: "IfNotPresent", Binding: binding, Sockets: 1, Cores: 2, Threads: 1,
		Memory: resource.MustParse("512Mi"), TokenSecret: "cnperf-token-dryrun", DataPort: 7101}
}

// vmDryRun: the VMIs cnperf builds (each binding) pass the API server's server-side dry run with
// strict field validation, KubeVirt's CRD schema and its validating webhook; one with a field
// KubeVirt does not know is refused (the check can fail).
func vmDryRun(ctx context.Context, t *testing.T, cl kpCluster, image string) {
	vmis := kube.RESTVMIs{CS: cl.cs}
	for _, b := range kube.Bindings {
		body, _ := json.Marshal(vmDryRunVMI(image, b).VMI())
		err := vmis.Create(ctx, "default", body, true)
		if b == kube.BindingPasst && err != nil && strings.Contains(err.Error(), passtGateOff) {
			t.Logf("%s: refused, KubeVirt's feature gate Passt is off: %v (its cases skip)", b, err)
			continue
		}
		if err != nil {
			t.Errorf("%s: the API server refused the VMI: %v", b, err)
		} else {
			t.Logf("%s: server-side dry run (strict field validation) accepted the VMI", b)
		}
	}
	bad := kube.VMOptions{Name: "cnperf-dry-run", Namespace: "default", Image: image, Binding: kube.BindingMasquerade,
		Memory: resource.MustParse("512Mi"), TokenSecret: "cnperf-token-dryrun"}.VMI()
	bad["spec"].(map[string]any)["domain"].(map[string]any)["cpu"].(map[string]any)["vcpus"] = 2
	body, _ := json.Marshal(bad)
	err := vmis.Create(ctx, "default", body, true)
	if err == nil || !strings.Contains(err.Error(), "vcpus") {
		t.Errorf("a VMI with spec.domain.cpu.vcpus: %v, want it refused naming the field", err)
	} else {
		t.Logf("a VMI with an unknown field is refused: %v", err)
	}
}

// passtGateOff is how KubeVirt v1.0's validating webhook refuses a passt VMI without the gate.
const passtGateOff = "Passt feature gate is not enabled"

// vmNeedPasstGate skips the test when KubeVirt refuses a passt VMI because its feature gate
// Passt is off (kubevirt.sh up turns it on; another KubeVirt may not): a server-side dry run of
// the VMI cnperf builds, whose refusal says so.
func vmNeedPasstGate(ctx context.Context, t *testing.T, cl kpCluster, image string) {
	t.Helper()
	body, _ := json.Marshal(vmDryRunVMI(image, kube.BindingPasst).VMI())
	if err := (kube.RESTVMIs{CS: cl.cs}).Create(ctx, "default", body, true); err != nil && strings.Contains(err.Error(), passtGateOff) {
		t.Skipf("the passt binding needs KubeVirt's feature gate Passt, which this cluster's KubeVirt CR does not enable "+
			"(spec.configuration.developerConfiguration.featureGates; kubevirt.sh up enables it): %v", err)
	}
}

// vmNeedDummy skips the test when the kernel has no dummy link type: KubeVirt v1.0's bridge
// binding puts a dummy interface in the pod's place (virt-handler: "failed to create dummy
// interface: eth0 ... operation not supported", and the VMI fails). The e2e nodes share this
// machine's kernel.
func vmNeedDummy(t *testing.T) {
	t.Helper()
	out, err := exec.Command("unshare", "--net", "ip", "link", "add", "cnperf-probe", "type", "dummy").CombinedOutput()
	if err != nil {
		t.Skipf("the bridge binding needs the kernel's dummy link type, which this kernel lacks (ip link add type dummy: %s): "+
			"KubeVirt v1.0's virt-handler puts a dummy interface in the pod interface's place and the VMI fails "+
			"(\"failed to create dummy interface: operation not supported\")", strings.TrimSpace(string(out)))
	}
}

// vmCheck checks one result of a --vm run.
func vmCheck(t *testing.T, r api.Result, vm, binding string, emulated bool) {
	t.Helper()
	label := string(r.Path) + " " + string(r.Profile)
	if r.Failed() || r.Summary.SamplesFailed > 0 {
		t.Errorf("%s: failed (%q, %d samples failed)", label, r.Error, r.Summary.SamplesFailed)
		return
	}
	vmCheckFigure(t, r, label)
	pl := r.Placement
	if pl == nil {
		t.Fatalf("%s: no placement", label)
	}
	for _, e := range []struct {
		ep   api.Endpoint
		isVM bool
	}{{pl.Server, vm != "client"}, {pl.Client, vm != "server"}} {
		if (e.ep.VM != nil) != e.isVM {
			t.Errorf("%s: %s endpoint VM %+v, want a VM: %v", label, e.ep.Role, e.ep.VM, e.isVM)
			continue
		}
		if e.ep.VM != nil && (e.ep.VM.Binding != binding || e.ep.VM.VCPUs != 1 || e.ep.VM.Emulated != emulated || e.ep.PodIP == "") {
			t.Errorf("%s: %s VM %+v (address %q), want binding %s, 1 vCPU, emulated %v", label, e.ep.Role, *e.ep.VM, e.ep.PodIP, binding, emulated)
		}
	}
	if same := r.Path == api.PathPodPodSameNode; pl.Client.Node == "" || (pl.Client.Node == pl.Server.Node) != same {
		t.Errorf("%s: client on %q, server on %q: want on the same node %v", label, pl.Client.Node, pl.Server.Node, same)
	}
	if pl.Server.VM != nil && pl.Target != pl.Server.PodIP {
		t.Errorf("%s: dialled %s, not the server VM's address %s", label, pl.Target, pl.Server.PodIP)
	}
}

// vmCheckFigure fails when a TCP_STREAM result has no throughput or a TCP_RR result no
// transaction rate (label names the result).
func vmCheckFigure(t *testing.T, r api.Result, label string) {
	t.Helper()
	switch r.Profile {
	case api.TCPStream:
		if r.Summary.ThroughputBitsPerSecond == nil || r.Summary.ThroughputBitsPerSecond.Mean <= 0 {
			t.Errorf("%s: no throughput", label)
		}
	case api.TCPRR:
		if r.Summary.TransactionsPerSecond == nil || r.Summary.TransactionsPerSecond.Mean <= 0 {
			t.Errorf("%s: no transaction rate", label)
		}
	}
}

// vmNothingLeft fails when anything labelled with the run is left: VMIs, their launcher pods,
// the run's other objects.
func vmNothingLeft(ctx context.Context, t *testing.T, cl kpCluster, runID string) {
	t.Helper()
	sel := kube.RunSelector(runID)
	vmis, err := kube.RESTVMIs{CS: cl.cs}.List(ctx, "", sel)
	if err != nil {
		t.Fatalf("list VMIs: %v", err)
	}
	var left []string
	for _, m := range vmis {
		left = append(left, "VirtualMachineInstance "+m.Namespace+"/"+m.Name)
	}
	pods, err := cl.cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: "kubevirt.io=virt-launcher"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if strings.HasPrefix(p.Namespace, "cnperf-e2e-vm") || p.Labels[kube.LabelRun] == runID {
			left = append(left, "launcher pod "+p.Namespace+"/"+p.Name)
		}
	}
	left = append(left, kpLeftovers(ctx, t, cl.cs, runID)...)
	if len(left) > 0 {
		t.Errorf("left after the run: %s", strings.Join(left, ", "))
	}
}

// TestKubeVirtK8sNetperfVM: k8s-netperf's README example `k8s-netperf --vm` with its `--iperf`
// (its netperf.yml, the netperf and iperf3 drivers, both endpoints VMs) as cnperf runs it,
// `cnperf run --vm -c netperf.yml --driver netperf,iperf3` (2 s, one sample: emulated guests),
// gives the same cases as the file gives with pods (its --dry-run): netperf's TCP_STREAM twice,
// UDP_STREAM, TCP_CRR direct and through the ClusterIP Service (service: true), TCP_RR, and
// iperf3's three stream tests; the tests a driver cannot run skipped with a warning as
// k8s-netperf skips them; each passes, between VMs (a server VM per driver), with the
// masquerade binding.
func TestKubeVirtK8sNetperfVM(t *testing.T) {
	cl := kpClusterFromEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	if kv := kube.CheckKubeVirt(ctx, cl.cs); kv.Missing != "" {
		t.Skipf("%s; make e2e KUBEVIRT=1 installs it (test/e2e/harness/kubevirt.sh up; CI's cluster has none)", kv.Missing)
	}
	file, err := filepath.Abs("../../internal/config/testdata/peers/k8s-netperf/netperf.yml@492f5514295f.yml")
	if err != nil {
		t.Fatal(err)
	}
	common := []string{"run", "--platform", "kube", "--kubeconfig", cl.kubeconfig, "-c", file, "--driver", "netperf,iperf3",
		"--duration", "2s", "--samples", "1"}
	type key struct {
		name, driver string
		profile      api.Profile
		path         api.Path
		service      bool
	}
	out, stderr, code := kpRunCLI(ctx, append(common, "--dry-run", "-o", "json")...)
	var planned []struct {
		Name    string      `json:"name"`
		Profile api.Profile `json:"profile"`
		Path    api.Path    `json:"path"`
		Driver  string      `json:"driver"`
		Params  api.Params  `json:"params"`
	}
	if code != exit.OK || json.Unmarshal([]byte(out), &planned) != nil || len(planned) == 0 {
		t.Fatalf("the file's cases with pods (--dry-run -o json): exit %d, stderr:\n%s\nstdout:\n%s", code, stderr, out)
	}
	want := map[key]bool{}
	for _, c := range planned {
		want[key{c.Name, c.Driver, c.Profile, c.Path, c.Params.Service}] = true
	}
	image := cmp.Or(os.Getenv("CNPERF_E2E_VM_IMAGE"), vmGuestImage)
	runID := uuid.NewString()
	results := filepath.Join(t.TempDir(), "run.jsonl")
	start := time.Now()
	out, stderr, code = kpRunCLI(ctx, append(common, "-n", kpNamespace("cnperf-e2e-vm-k8snetperf"), "--uuid", runID, "--image", agentImage(),
		"--vm", "--vm-image", image, "--results", results, "-o", "table")...)
	t.Logf("cnperf run --vm -c netperf.yml --driver netperf,iperf3: exit %d in %.0fs, stderr:\n%s\nstdout:\n%s", code, time.Since(start).Seconds(), stderr, out)
	if code != exit.OK {
		t.Fatalf("cnperf exited %d", code)
	}
	if !strings.Contains(stderr, `driver "netperf" cannot run profile TCP_STREAM_LAT`) {
		t.Error("no warning that netperf skips the TCP_STREAM_LAT test, as k8s-netperf does")
	}
	runs, _, err := runfile.ReadWarnings(results)
	if err != nil || len(runs) != 1 {
		t.Fatalf("results file: %v (%d runs)", err, len(runs))
	}
	got := map[key]bool{}
	for _, r := range runs[0].Results {
		got[key{r.Name, r.Driver, r.Profile, r.Path, r.Params.Service}] = true
		label := r.Name + " " + string(r.Profile)
		if r.Failed() || r.Summary.SamplesFailed > 0 {
			t.Errorf("%s: failed (%q)", label, r.Error)
			continue
		}
		if pl := r.Placement; pl == nil || pl.Server.VM == nil || pl.Client.VM == nil {
			t.Errorf("%s: placement %+v, want both endpoints VMs", label, pl)
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("cases with VMs %v, with pods %v: want the same", got, want)
	}
	vmNothingLeft(ctx, t, cl, runID)
}
