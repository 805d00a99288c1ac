package clusterinfo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// SummaryFunc reads a node's kubelet summary (/api/v1/nodes/NODE/proxy/stats/summary).
type SummaryFunc func(ctx context.Context, node string) ([]byte, error)

// FootprintSource names where IdleFootprint's figures come from.
const FootprintSource = "kubelet summary"

// FootprintAccess is the permission the idle footprint needs: the kubelet's summary through
// the API server's node proxy (deploy/rbac/idle-footprint.yaml).
const FootprintAccess = "get nodes/proxy (cluster-wide)"

// KubeletSummary reads a node's kubelet summary through the API server's node proxy.
func KubeletSummary(cs kubernetes.Interface) SummaryFunc {
	return func(ctx context.Context, node string) ([]byte, error) {
		rc := cs.CoreV1().RESTClient()
		if r, ok := rc.(*rest.RESTClient); rc == nil || (ok && r == nil) {
			return nil, errors.New("no REST client for the node proxy")
		}
		return rc.Get().AbsPath("/api/v1/nodes", node, "proxy", "stats", "summary").DoRaw(ctx)
	}
}

// footprintNamespaces are where CNIs and proxies run their agents: the pods of these
// namespaces are candidates (a recognised agent anywhere else is found by its name too).
var footprintNamespaces = []string{"kube-system", "calico-system", "kube-flannel", "cilium", "openshift-ovn-kubernetes", "openshift-sdn"}

// agentKinds recognise an agent pod: by one of its labels (KEY=VALUE), else by the start of
// its name (a DaemonSet's pods are NAME-xxxxx). The first match wins; Component "" marks
// pods of those namespaces that are not agents (operators, controllers).
var agentKinds = []struct {
	component string
	labels    []string
	prefix    string
}{
	{"", []string{"k8s-app=calico-kube-controllers", "k8s-app=cilium-operator", "name=cilium-operator"}, "cilium-operator-"},
	{"calico-node", []string{"k8s-app=calico-node"}, "calico-node-"},
	{"canal", []string{"k8s-app=canal"}, "canal-"},
	{"kube-proxy", []string{"k8s-app=kube-proxy", "component=kube-proxy"}, "kube-proxy-"},
	{"cilium-envoy", []string{"k8s-app=cilium-envoy"}, "cilium-envoy-"},
	{"cilium-agent", []string{"k8s-app=cilium", "app.kubernetes.io/name=cilium-agent"}, "cilium-"},
	{"flannel", []string{"app=flannel", "k8s-app=flannel"}, "kube-flannel-ds-"},
	{"kube-router", []string{"k8s-app=kube-router"}, "kube-router-"},
	{"antrea-agent", []string{"component=antrea-agent"}, "antrea-agent-"},
	{"weave-net", []string{"name=weave-net"}, "weave-net-"},
	{"ovnkube-node", []string{"app=ovnkube-node"}, "ovnkube-node-"},
	{"multus", []string{"app=multus", "name=multus"}, "kube-multus-ds-"},
}

// AgentComponent names the agent a pod is, from its labels, then its name; "" when it is
// not one cnperf knows.
func AgentComponent(name string, labels map[string]string) (component string, known bool) {
	for _, k := range agentKinds {
		for _, kv := range k.labels {
			key, val, _ := strings.Cut(kv, "=")
			if labels[key] == val {
				return k.component, true
			}
		}
	}
	for _, k := range agentKinds {
		if strings.HasPrefix(name, k.prefix) {
			return k.component, true
		}
	}
	return "", false
}

// isOtherAgent says whether a pod cnperf does not know is a node agent all the same: on the
// host network and run by a DaemonSet or as a static pod (owned by its Node).
func isOtherAgent(p *corev1.Pod) bool {
	if !p.Spec.HostNetwork {
		return false
	}
	for _, o := range p.OwnerReferences {
		if o.Kind == "DaemonSet" || o.Kind == "Node" {
			return true
		}
	}
	return false
}

// kubeletSummary is the part of the kubelet's stats/summary the footprint reads.
type kubeletSummary struct {
	Node struct {
		NodeName string `json:"nodeName"`
	} `json:"node"`
	Pods []struct {
		PodRef struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"podRef"`
		CPU *struct {
			Time                 time.Time `json:"time"`
			UsageCoreNanoSeconds *uint64   `json:"usageCoreNanoSeconds"`
		} `json:"cpu"`
		Memory *struct {
			WorkingSetBytes *uint64 `json:"workingSetBytes"`
		} `json:"memory"`
	} `json:"pods"`
}

type podCPU struct {
	at    time.Time
	nanos uint64
}

func parseSummary(raw []byte) (*kubeletSummary, error) {
	var s kubeletSummary
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("kubelet summary: %w", err)
	}
	return &s, nil
}

// footprintOf computes each agent pod's CPU rate between two kubelet summaries of node and its
// working set in the second. pods are the candidate pods with their labels, by
// "namespace/name" (nil: recognised by name only). A pod whose CPU reading did not advance
// between the two (the kubelet refreshes its stats every 10-15 s) is left out and named in
// stale.
func footprintOf(node string, before, after []byte, pods map[string]*corev1.Pod) (agents []api.AgentFootprint, stale []string, err error) {
	b, err := parseSummary(before)
	if err != nil {
		return nil, nil, err
	}
	a, err := parseSummary(after)
	if err != nil {
		return nil, nil, err
	}
	first := map[string]podCPU{}
	for _, p := range b.Pods {
		if p.CPU != nil && p.CPU.UsageCoreNanoSeconds != nil {
			first[p.PodRef.Namespace+"/"+p.PodRef.Name] = podCPU{p.CPU.Time, *p.CPU.UsageCoreNanoSeconds}
		}
	}
	for _, p := range a.Pods {
		key := p.PodRef.Namespace + "/" + p.PodRef.Name
		component, known := AgentComponent(p.PodRef.Name, nil)
		if pod := pods[key]; pod != nil {
			if component, known = AgentComponent(pod.Name, pod.Labels); !known && isOtherAgent(pod) {
				component, known = "other", true
			}
		}
		if !known || component == "" {
			continue
		}
		f, ok := first[key]
		if !ok || p.CPU == nil || p.CPU.UsageCoreNanoSeconds == nil || !p.CPU.Time.After(f.at) || *p.CPU.UsageCoreNanoSeconds < f.nanos {
			stale = append(stale, key)
			continue
		}
		window := p.CPU.Time.Sub(f.at).Seconds()
		fp := api.AgentFootprint{Node: node, Component: component, Namespace: p.PodRef.Namespace, Pod: p.PodRef.Name,
			CPUMillicores: float64(*p.CPU.UsageCoreNanoSeconds-f.nanos) / 1e6 / window, WindowSeconds: window}
		if p.Memory != nil && p.Memory.WorkingSetBytes != nil {
			fp.MemoryWorkingSetBytes = p.Memory.WorkingSetBytes
		}
		agents = append(agents, fp)
	}
	sort.Slice(agents, func(i, j int) bool {
		if agents[i].Component != agents[j].Component {
			return agents[i].Component < agents[j].Component
		}
		return agents[i].Pod < agents[j].Pod
	})
	return agents, stale, nil
}

// MinFootprintWindow is the shortest idle-footprint window: the kubelet refreshes a pod's
// stats every 10-15 s, and the rate needs two readings.
const MinFootprintWindow = 10 * time.Second

// IdleFootprint samples the agents of nodes over window with no load: a kubelet summary of each
// node, then another after window (and, for a pod whose reading has not moved yet, again
// every 2 s up to another window). Missing permissions or summaries are said in Note, never
// an error.
func IdleFootprint(ctx context.Context, cs kubernetes.Interface, summary SummaryFunc, nodes []string, window time.Duration) *api.IdleFootprint {
	out := &api.IdleFootprint{Source: FootprintSource, WindowSeconds: window.Seconds()}
	if len(nodes) == 0 {
		out.Note = "no endpoint node to sample"
		return out
	}
	pods := map[string]*corev1.Pod{}
	var listErrs []string
	for _, ns := range footprintNamespaces {
		l, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			listErrs = append(listErrs, fmt.Sprintf("pods of %s: %v", ns, err))
			continue
		}
		for i := range l.Items {
			pods[ns+"/"+l.Items[i].Name] = &l.Items[i]
		}
	}
	before := map[string][]byte{}
	var notes []string
	for _, n := range nodes {
		raw, err := summary(ctx, n)
		if err != nil {
			notes = append(notes, fmt.Sprintf("node %s: %v", n, err))
			continue
		}
		before[n] = raw
	}
	if len(before) == 0 {
		out.Note = "no kubelet summary (it needs " + FootprintAccess + "): " + strings.Join(notes, "; ")
		return out
	}
	start := time.Now()
	deadline := start.Add(2 * window)
	wait := window
	pending := map[string]bool{}
	for n := range before {
		pending[n] = true
	}
	for len(pending) > 0 {
		select {
		case <-ctx.Done():
			out.Note = "interrupted"
			return out
		case <-time.After(wait):
		}
		wait = 2 * time.Second
		for _, n := range nodes {
			if !pending[n] {
				continue
			}
			raw, err := summary(ctx, n)
			if err != nil {
				notes = append(notes, fmt.Sprintf("node %s: %v", n, err))
				delete(pending, n)
				continue
			}
			agents, stale, err := footprintOf(n, before[n], raw, pods)
			if err != nil {
				notes = append(notes, fmt.Sprintf("node %s: %v", n, err))
				delete(pending, n)
				continue
			}
			if len(stale) > 0 && time.Now().Before(deadline) {
				continue // the kubelet has not refreshed every agent's stats yet
			}
			if len(stale) > 0 {
				notes = append(notes, fmt.Sprintf("node %s: the kubelet's readings of %s did not change within %s",
					n, strings.Join(stale, ", "), 2*window))
			}
			out.Agents = append(out.Agents, agents...)
			delete(pending, n)
		}
	}
	out.WindowSeconds = time.Since(start).Seconds()
	if len(out.Agents) == 0 {
		notes = append(notes, "no CNI or proxy agent pod on node "+strings.Join(nodes, ", ")+
			" (agents that run as host processes, not pods, are not seen by the kubelet)")
	}
	if len(listErrs) > 0 {
		notes = append(notes, "agents recognised by name only: "+strings.Join(listErrs, "; "))
	}
	out.Note = strings.Join(notes, "; ")
	return out
}
