//go:build e2e

// k8s-netperf's --cudn and --udnl2 measured with OVN-Kubernetes's controller played by the test.
// OVN-Kubernetes cannot run on this machine (no Open vSwitch), so the test plays the part of it
// that cnperf meets: its node agents and node subnets (what cnperf's preflight looks for: a Ready
// pod labelled app=ovnkube-node on each node, the k8s.ovn.org/node-subnets annotation), and its
// cluster manager's user-defined-network controller, a goroutine that watches the
// ClusterUserDefinedNetworks and UserDefinedNetworks cnperf creates and does what OVN-Kubernetes
// does with them: creates the NetworkAttachmentDefinition named after the network in each
// namespace it selects (owned by the network object) and sets the NetworkCreated condition. Only
// the definition's CNI configuration is not OVN-Kubernetes's: a Linux bridge on the harness's
// bridge with whereabouts (10.127.100.0/24), which the harness's Multus can attach; so the traffic
// measured is real, over that bridge, and the test checks cnperf's whole path: preflight, objects,
// wait, attachment, addresses, results, CSV and clean-up.
//
// What cannot be played: a primary UserDefinedNetwork (--udnl2/--udnl3). OVN-Kubernetes makes it
// the pods' primary network itself (its CNI plugin is the cluster's, and it writes
// k8s.ovn.org/pod-networks); Multus only adds secondary interfaces and cannot replace the pod's
// default network. So for --udnl2 the test checks what can be: the namespace created with the
// primary-UDN label, the UserDefinedNetwork created and its definition waited for, every case
// failing with the reason (no k8s.ovn.org/pod-networks: OVN-Kubernetes did not attach the pod),
// never measured on the default network instead, and the objects deleted. And the wait's error:
// a network the controller refuses (NetworkCreated=False) stops the run naming the object and its
// condition. SR-IOV is not played here (it needs a device plugin advertising VFs).
package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/runfile"
	"github.com/cnperf/cnperf/internal/text"
)

// playedRange is where the played definitions' whereabouts allocates (apart from the harness's
// 10.125/10.126 and the macvlan tests' 10.127.0.0/24).
const playedRange = "10.127.100.0/24"

// pcOVNPresence plays OVN-Kubernetes's node agents (a Ready pod labelled app=ovnkube-node on each
// node, in the test's namespace) and its node subnets (the annotation, only where absent); all
// removed at the end.
func pcOVNPresence(ctx context.Context, t *testing.T, cl kpCluster, id string) {
	t.Helper()
	ns := "udn-ovnk-" + id
	if _, err := cl.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cl.cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
		if !waitFor(2*time.Minute, func() bool {
			_, err := cl.cs.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		}) {
			t.Errorf("namespace %s still there 2 min after its deletion", ns)
		}
	})
	nodes, err := cl.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range nodes.Items {
		co := kube.ContainerOptions{Image: agentImage(), PullPolicy: corev1.PullIfNotPresent}
		pod := kube.PodOptions{Name: "ovnkube-node-" + n.Name, Namespace: ns, Labels: map[string]string{"app": "ovnkube-node"},
			Nodes: []string{n.Name}, RunOnce: true, Containers: []corev1.Container{co.Container("played", kube.IdleCommand)}}.Pod()
		if _, err := cl.cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, ok := n.Annotations["k8s.ovn.org/node-subnets"]; ok {
			continue
		}
		patch := fmt.Sprintf(`{"metadata":{"annotations":{"k8s.ovn.org/node-subnets":"{\"default\":[\"10.127.%d.0/24\"]}"}}}`, 200+i)
		if _, err := cl.cs.CoreV1().Nodes().Patch(ctx, n.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		name := n.Name
		t.Cleanup(func() {
			_, err := cl.cs.CoreV1().Nodes().Patch(context.Background(), name, types.MergePatchType,
				[]byte(`{"metadata":{"annotations":{"k8s.ovn.org/node-subnets":null}}}`), metav1.PatchOptions{})
			if err != nil {
				t.Errorf("remove the played k8s.ovn.org/node-subnets of node %s: %v", name, err)
			}
		})
	}
	if !waitFor(2*time.Minute, func() bool {
		pods, err := cl.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil || len(pods.Items) != len(nodes.Items) {
			return false
		}
		for _, p := range pods.Items {
			if !podReady(&p) {
				return false
			}
		}
		return true
	}) {
		t.Fatalf("the played ovnkube-node pods in %s are not Ready in 2 min", ns)
	}
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// pcController plays OVN-Kubernetes's user-defined-network controller on the networks cnperf
// creates (labelled as cnperf's): for each it makes the definition in the namespaces it selects
// and sets NetworkCreated=True, or, for a Layer3 ClusterUserDefinedNetwork (refuseLayer3),
// NetworkCreated=False with a reason and no definition, for the wait's error.
type pcController struct {
	cl           kpCluster
	bridgeConf   map[string]any // the harness's e2e-bridge configuration, the model of the played one
	refuseLayer3 bool
	mu           sync.Mutex
	made         []string // what it did, for the log
}

func (c *pcController) logf(format string, a ...any) {
	c.mu.Lock()
	c.made = append(c.made, time.Now().UTC().Format("15:04:05.000")+" "+fmt.Sprintf(format, a...))
	c.mu.Unlock()
}

// run polls every 200 ms until ctx ends.
func (c *pcController) run(ctx context.Context) {
	for ctx.Err() == nil {
		c.sync(ctx, "/apis/k8s.ovn.org/v1/clusteruserdefinednetworks")
		c.sync(ctx, "/apis/k8s.ovn.org/v1/userdefinednetworks")
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

type pcNetwork struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Spec       struct {
		Topology          string `json:"topology"` // a UserDefinedNetwork's
		NamespaceSelector struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"namespaceSelector"`
		Network struct {
			Topology string `json:"topology"`
		} `json:"network"` // a ClusterUserDefinedNetwork's
	} `json:"spec"`
	Status struct {
		Conditions []metav1.Condition `json:"conditions"`
	} `json:"status"`
}

func (c *pcController) sync(ctx context.Context, collection string) {
	rc := c.cl.cs.CoreV1().RESTClient()
	raw, err := rc.Get().AbsPath(collection).Param("labelSelector", kube.ManagedSelector()).DoRaw(ctx)
	if err != nil {
		return // the CRD may not be there yet, or gone
	}
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if json.Unmarshal(raw, &list) != nil {
		return
	}
	for _, item := range list.Items {
		var n pcNetwork
		if json.Unmarshal(item, &n) != nil || len(n.Status.Conditions) > 0 || n.Metadata.DeletionTimestamp != nil {
			continue
		}
		namespaces, topology := []string{n.Metadata.Namespace}, n.Spec.Topology
		if n.Kind == "ClusterUserDefinedNetwork" {
			namespaces, topology = nil, n.Spec.Network.Topology
			if ns := n.Spec.NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"]; ns != "" {
				namespaces = []string{ns}
			}
		}
		cond := metav1.Condition{Type: "NetworkCreated", Status: metav1.ConditionTrue, Reason: "NetworkAttachmentDefinitionCreated",
			Message:            "NetworkAttachmentDefinition has been created (played by the e2e test: a bridge on the harness's bridge)",
			LastTransitionTime: metav1.Now()}
		if c.refuseLayer3 && topology == "Layer3" {
			cond.Status, cond.Reason = metav1.ConditionFalse, "SyncError"
			cond.Message = "played by the e2e test: this controller refuses Layer3 networks"
		} else {
			for _, ns := range namespaces {
				if err := c.createNAD(ctx, ns, &n); err != nil {
					c.logf("%s %s: create its definition in %s: %v", n.Kind, n.Metadata.Name, ns, err)
					return // tried again at the next poll
				}
			}
		}
		var obj map[string]any
		_ = json.Unmarshal(item, &obj)
		obj["status"] = map[string]any{"conditions": []metav1.Condition{cond}}
		body, _ := json.Marshal(obj)
		path := collection + "/" + n.Metadata.Name
		if n.Metadata.Namespace != "" {
			path = strings.Replace(collection, "/v1/", "/v1/namespaces/"+n.Metadata.Namespace+"/", 1) + "/" + n.Metadata.Name
		}
		if _, err := rc.Put().AbsPath(path, "status").SetHeader("Content-Type", "application/json").Body(body).DoRaw(ctx); err != nil {
			c.logf("%s %s: set its status: %v", n.Kind, n.Metadata.Name, err)
			continue
		}
		c.logf("%s %s: %s=%s (%s) in %v", n.Kind, n.Metadata.Name, cond.Type, cond.Status, cond.Reason, namespaces)
	}
}

// createNAD makes the definition OVN-Kubernetes would make for network n in namespace ns (its
// name, labels and owner), with the played bridge configuration.
func (c *pcController) createNAD(ctx context.Context, ns string, n *pcNetwork) error {
	conf := map[string]any{}
	for k, v := range c.bridgeConf {
		conf[k] = v
	}
	conf["name"] = "cluster_udn_" + n.Metadata.Name
	ipam := map[string]any{}
	if m, ok := c.bridgeConf["ipam"].(map[string]any); ok {
		for k, v := range m {
			ipam[k] = v
		}
	}
	ipam["range"] = playedRange
	conf["ipam"] = ipam
	cfg, _ := json.Marshal(conf)
	nad := map[string]any{
		"apiVersion": "k8s.cni.cncf.io/v1", "kind": "NetworkAttachmentDefinition",
		"metadata": map[string]any{"name": n.Metadata.Name, "namespace": ns,
			"labels": map[string]string{"k8s.ovn.org/user-defined-network": ""},
			"ownerReferences": []map[string]any{{"apiVersion": n.APIVersion, "kind": n.Kind, "name": n.Metadata.Name,
				"uid": string(n.Metadata.UID), "controller": true, "blockOwnerDeletion": true}}},
		"spec": map[string]string{"config": string(cfg)},
	}
	body, _ := json.Marshal(nad)
	_, err := c.cl.cs.CoreV1().RESTClient().Post().AbsPath("/apis/k8s.cni.cncf.io/v1/namespaces", ns, "network-attachment-definitions").
		SetHeader("Content-Type", "application/json").Body(body).DoRaw(ctx)
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err == nil {
		c.logf("created NetworkAttachmentDefinition %s/%s: %s", ns, n.Metadata.Name, cfg)
	}
	return err
}

// pcNetworksLeft are the networks of kind (collection) labelled with run runID still there.
func pcNetworksLeft(ctx context.Context, t *testing.T, cl kpCluster, collection, runID string) []string {
	t.Helper()
	raw, err := cl.cs.CoreV1().RESTClient().Get().AbsPath(collection).Param("labelSelector", kube.RunSelector(runID)).DoRaw(ctx)
	if err != nil {
		t.Fatalf("list %s: %v", collection, err)
	}
	var list struct {
		Items []pcNetwork `json:"items"`
	}
	_ = json.Unmarshal(raw, &list)
	var out []string
	for _, n := range list.Items {
		out = append(out, n.Kind+" "+n.Metadata.Namespace+"/"+n.Metadata.Name)
	}
	return out
}

func TestNetworkModesPlayedOVNKubernetes(t *testing.T) {
	cl := kpClusterFromEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	snNeedMultus(ctx, t, cl) // skips without Multus (CI's cluster)
	start := time.Now()
	raw, err := cl.cs.CoreV1().RESTClient().Get().AbsPath("/apis/k8s.cni.cncf.io/v1/namespaces/multus-e2e/network-attachment-definitions/e2e-bridge").DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var bridgeNAD struct {
		Spec struct{ Config string } `json:"spec"`
	}
	_ = json.Unmarshal(raw, &bridgeNAD)
	ctl := &pcController{cl: cl, refuseLayer3: true}
	if err := json.Unmarshal([]byte(bridgeNAD.Spec.Config), &ctl.bridgeConf); err != nil {
		t.Fatalf("e2e-bridge's configuration: %v", err)
	}
	id := uuid.NewString()[:6]
	t.Cleanup(func() { pcRemovePools(t, cl) })
	nmInstallCRDs(ctx, t, cl)
	pcOVNPresence(ctx, t, cl, id)
	cctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); ctl.run(cctx) }()
	t.Cleanup(func() {
		stop()
		wg.Wait()
		t.Logf("the played controller:\n  %s", strings.Join(ctl.made, "\n  "))
	})
	_, subnet, _ := net.ParseCIDR(playedRange)
	run := func(label, ns, runID, results string, args ...string) (string, string, int) {
		a := append([]string{"run", "--platform", "kube", "--kubeconfig", cl.kubeconfig, "-n", ns, "--uuid", runID, "--image", agentImage(),
			"--driver", "native", "--duration", "2s", "--samples", "2", "--results", results, "-o", "table"}, args...)
		t0 := time.Now()
		out, stderr, code := kpRunCLI(ctx, a...)
		t.Logf("%s: cnperf exit %d in %.0fs, stderr:\n%s\nstdout:\n%s", label, code, time.Since(t0).Seconds(), stderr, out)
		return out, stderr, code
	}
	checkGone := func(label, runID string) {
		for _, c := range []string{"/apis/k8s.ovn.org/v1/clusteruserdefinednetworks", "/apis/k8s.ovn.org/v1/userdefinednetworks"} {
			if left := pcNetworksLeft(ctx, t, cl, c, runID); len(left) > 0 {
				t.Errorf("%s: left behind: %v", label, left)
			}
		}
		if left := kpLeftovers(ctx, t, cl.cs, runID); len(left) > 0 {
			t.Errorf("%s: left behind: %v", label, left)
		}
	}

	// 1. --cudn layer2: measured on the definition the controller made, same node and cross node
	t.Run("cudn", func(t *testing.T) {
		runID := uuid.NewString()
		ns := "udn-cudn-" + id
		results := filepath.Join(t.TempDir(), "run.jsonl")
		_, stderr, code := run("--cudn layer2", ns, runID, results, "--cudn", "layer2", "--profile", "TCP_STREAM,TCP_RR,TCP_CRR",
			"--path", "pod-pod-same-node,pod-pod-cross-node")
		network := ns + "/cudn-secondary-netperf"
		if code != exit.OK {
			t.Fatalf("cnperf exited %d", code)
		}
		for _, w := range []string{"created ClusterUserDefinedNetwork cudn-secondary-netperf for --cudn layer2 (deleted at the end of the run)",
			"waiting up to 2m0s for NetworkAttachmentDefinition " + network, "secondary network " + network + ": CNI plugin bridge"} {
			if !text.ContainsFolded(stderr, w) {
				t.Errorf("stderr does not say %q", w)
			}
		}
		runs, _, err := runfile.ReadWarnings(results)
		if err != nil || len(runs) != 1 || len(runs[0].Results) != 6 {
			t.Fatalf("results file: %v", err)
		}
		for _, r := range runs[0].Results {
			label := fmt.Sprintf("%s %s", r.Profile, r.Path)
			if r.Failed() || r.Summary.SamplesFailed > 0 {
				t.Errorf("%s: failed (%q)", label, r.Error)
				continue
			}
			a := r.Placement.Attachment
			if a == nil || a.Network != network || a.Type != "bridge" || a.Mode == nil || a.Mode.Flag != "--cudn layer2" ||
				!subnet.Contains(net.ParseIP(a.ServerIP)) || !subnet.Contains(net.ParseIP(a.ClientIP)) || r.Placement.Target != a.ServerIP {
				t.Errorf("%s: attachment %+v, target %s: want %s (bridge, --cudn layer2) between addresses of %s", label, a, r.Placement.Target, network, subnet)
				continue
			}
			t.Logf("%s: %s -> %s on %s (%s, MTU %d): %s", label, a.ClientIP, a.ServerIP, a.Network, a.Interface, a.MTUBytes, pcFigure(&r.Summary))
		}
		if dir := os.Getenv("CNPERF_E2E_KEEP_RESULTS"); dir != "" { // a real run for internal/report's golden files
			if b, err := os.ReadFile(results); err == nil {
				_ = os.WriteFile(filepath.Join(dir, "real-cudn-run.jsonl"), b, 0o644)
			}
		}
		csv, stderr2, code := kpRunCLI(ctx, "report", "-o", "k8s-netperf-csv", results)
		t.Logf("k8s-netperf CSV:\n%s", csv)
		if code != exit.OK || strings.Count(csv, ",Cudn -layer2,,,,,") != 6 {
			t.Errorf("k8s-netperf CSV (exit %d, %s): want UDN Info 'Cudn -layer2' and the other network columns empty on 6 rows", code, stderr2)
		}
		checkGone("--cudn layer2", runID)
	})

	// 2. the controller refuses a Layer3 network: the run stops at the wait, naming the object and its condition
	t.Run("cudn refused", func(t *testing.T) {
		runID := uuid.NewString()
		_, stderr, code := run("--cudn layer3", "udn-refused-"+id, runID, filepath.Join(t.TempDir(), "run.jsonl"), "--cudn", "layer3",
			"--profile", "TCP_RR", "--path", "pod-pod-cross-node", "--network-ready-timeout", "5s")
		want := "--cudn layer3: the network was not made: OVN-Kubernetes did not make NetworkAttachmentDefinition udn-refused-" + id + "/cudn-secondary-netperf and " +
			"condition NetworkCreated=True within 5s; ClusterUserDefinedNetwork cudn-secondary-netperf's status conditions: NetworkCreated=False " +
			"(SyncError: played by the e2e test: this controller refuses Layer3 networks)"
		if code == exit.OK || !text.ContainsFolded(stderr, want) {
			t.Errorf("exit %d; stderr does not say %q", code, want)
		}
		checkGone("--cudn layer3", runID)
	})

	// 3. --udnl2: the namespace labelled, the UserDefinedNetwork created and waited for; the pods are
	// not on it (only OVN-Kubernetes can make it their primary network): every case fails saying so
	t.Run("udnl2", func(t *testing.T) {
		runID := uuid.NewString()
		ns := "udn-primary-" + id
		results := filepath.Join(t.TempDir(), "run.jsonl")
		var labelled bool
		wctx, wstop := context.WithCancel(ctx)
		go func() { // the namespace's label, seen while the run lives
			for wctx.Err() == nil {
				if n, err := cl.cs.CoreV1().Namespaces().Get(wctx, ns, metav1.GetOptions{}); err == nil {
					_, labelled = n.Labels[kube.PrimaryUDNLabel]
					return
				}
				time.Sleep(100 * time.Millisecond)
			}
		}()
		_, stderr, code := run("--udnl2", ns, runID, results, "--udnl2", "--profile", "TCP_RR", "--path", "pod-pod-cross-node")
		wstop()
		if !labelled {
			t.Errorf("namespace %s was not created with the label %s", ns, kube.PrimaryUDNLabel)
		}
		for _, w := range []string{"created UserDefinedNetwork " + ns + "/udn-primary-netperf for --udnl2 (deleted at the end of the run)",
			"primary network " + ns + "/udn-primary-netperf: CNI plugin bridge"} {
			if !text.ContainsFolded(stderr, w) {
				t.Errorf("stderr does not say %q", w)
			}
		}
		if code == exit.OK {
			t.Errorf("exit 0: the cases passed, but nothing made the pods' primary network the UDN")
		}
		runs, _, err := runfile.ReadWarnings(results)
		if err != nil || len(runs) != 1 || len(runs[0].Results) != 1 {
			t.Fatalf("results file: %v", err)
		}
		r := runs[0].Results[0]
		want := "has no k8s.ovn.org/pod-networks annotation: OVN-Kubernetes did not attach it to " + ns + "/udn-primary-netperf"
		if !r.Failed() || !strings.Contains(r.Error, want) {
			t.Errorf("the case: failed %v, error %q; want it failed with %q", r.Failed(), r.Error, want)
		}
		checkGone("--udnl2", runID)
	})
	if left := snIPAMState(ctx, t, cl, subnet); len(left) > 0 {
		t.Errorf("whereabouts still holds addresses of %s: %v", subnet, left)
	}
	t.Logf("took %.1fs", time.Since(start).Seconds())
}

// pcRemovePools deletes whereabouts's IPPools of the played range (whereabouts keeps a pool, empty,
// after its last address is released).
func pcRemovePools(t *testing.T, cl kpCluster) {
	ctx := context.Background()
	rc := cl.cs.CoreV1().RESTClient()
	raw, err := rc.Get().AbsPath("/apis/whereabouts.cni.cncf.io/v1alpha1/ippools").DoRaw(ctx)
	if err != nil {
		t.Errorf("list whereabouts IPPools: %v", err)
		return
	}
	var pools struct {
		Items []struct {
			Metadata struct{ Name, Namespace string } `json:"metadata"`
			Spec     struct {
				Range string `json:"range"`
			} `json:"spec"`
		} `json:"items"`
	}
	_ = json.Unmarshal(raw, &pools)
	for _, p := range pools.Items {
		if _, n, err := net.ParseCIDR(p.Spec.Range); err == nil && n.String() == playedRange {
			_, err := rc.Delete().AbsPath("/apis/whereabouts.cni.cncf.io/v1alpha1/namespaces", p.Metadata.Namespace, "ippools", p.Metadata.Name).DoRaw(ctx)
			if err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("delete whereabouts IPPool %s/%s: %v", p.Metadata.Namespace, p.Metadata.Name, err)
			}
		}
	}
}

// pcFigure is a result's main figure for the log.
func pcFigure(s *api.Summary) string {
	switch {
	case s.ThroughputBitsPerSecond != nil:
		return fmt.Sprintf("%.2f Gbit/s", s.ThroughputBitsPerSecond.Mean/1e9)
	case s.ConnectionsPerSecond != nil:
		return fmt.Sprintf("%.0f conn/s", s.ConnectionsPerSecond.Mean)
	case s.LatencyMicroseconds != nil && s.LatencyMicroseconds.P50 != nil:
		return fmt.Sprintf("p50 %.1f us", *s.LatencyMicroseconds.P50)
	case s.TransactionsPerSecond != nil:
		return fmt.Sprintf("%.0f trans/s", s.TransactionsPerSecond.Mean)
	}
	return "no figure"
}
