package kube

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/kube/kubetest"
)

// A run with CreateNetwork creates the definition in its namespace after the namespace and before
// the pods, measures on it, and deletes it at the end, but only what it created: in a namespace it
// created, the definition goes with the namespace; in one it found, it is deleted by name; one
// that exists already is neither used nor deleted.
func TestCreateNetwork(t *testing.T) {
	def, err := kube.MacvlanDefinition("eth0", `{"type": "whereabouts", "range": "192.168.200.0/24"}`)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name          string
		namespace     string
		clientNS      string // the clients' namespace when not namespace (created by the run)
		existingNS    bool
		existingNAD   bool
		network       string
		deny          string
		wantErr       string
		wantCreated   bool
		wantDeleted   bool
		wantNamespace bool // the namespace is still there after Close
	}{
		{name: "namespace cnperf created", namespace: "cnperf", network: "cnperf/macvlan-netperf", wantCreated: true},
		{name: "existing namespace", namespace: "perf", existingNS: true, network: "perf/macvlan-netperf",
			wantCreated: true, wantDeleted: true, wantNamespace: true},
		{name: "clients in a namespace of their own", namespace: "perf", clientNS: "perf-clients", existingNS: true, network: "perf/macvlan-netperf",
			wantCreated: true, wantDeleted: true, wantNamespace: true},
		{name: "the definition exists", namespace: "perf", existingNS: true, existingNAD: true, network: "perf/macvlan-netperf",
			wantErr:       "NetworkAttachmentDefinition perf/macvlan-netperf exists already and is not this run's: delete it, or measure on it with --network perf/macvlan-netperf",
			wantNamespace: true},
		{name: "another network", namespace: "cnperf", network: "multus-e2e/e2e-bridge",
			wantErr: "the cases are on network multus-e2e/e2e-bridge, not on cnperf/macvlan-netperf, the NetworkAttachmentDefinition the run creates"},
		{name: "may not create", namespace: "cnperf", network: "cnperf/macvlan-netperf", deny: "create network-attachment-definitions",
			wantErr: "create network-attachment-definitions.k8s.cni.cncf.io in namespace cnperf — deploy/rbac/secondary-networks.yaml grants"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			c := newCluster(t, node("node1", "zone-a"), node("node2", "zone-a"))
			multusAttaches(c)
			if tt.deny != "" {
				c.deny[tt.deny] = true
			}
			if tt.existingNS {
				if _, err := c.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tt.namespace}}, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			nads := &kubetest.NADs{}
			if tt.existingNAD {
				nads.Objs = map[string][]byte{tt.namespace + "/" + def.Name: []byte(kubetest.BridgeNAD)}
			}
			p := newTestPlatform(t, c, Options{Namespace: tt.namespace, ClientNamespace: tt.clientNS, CreateNetwork: def})
			p.nads = nads
			cases := append(networkCases(tt.network, api.PathPodPodSameNode, api.PathPodPodCrossNode),
				casesWith([]string{"iperf3"}, []api.Path{api.PathPodPodCrossNode})...)
			err := p.Prepare(ctx, cases, testDrivers)
			switch {
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
				}
			case err != nil:
				t.Fatal(err)
			default:
				pods, _ := c.cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: kube.RunSelector(testRun)})
				attached := 0
				for _, pod := range pods.Items {
					if pod.Annotations[kube.AnnotationNetworks] == tt.network {
						attached++
					}
				}
				if attached != 3 {
					t.Errorf("%d pods on %s, want 3", attached, tt.network)
				}
				pair, err := p.Pair(ctx, cases[1])
				if err != nil {
					t.Fatal(err)
				}
				if a := pair.Placement.Attachment; a == nil || a.Network != tt.network || a.Type != "macvlan" || pair.Target.Host != a.ServerIP {
					t.Errorf("attachment %+v, target %s", a, pair.Target.Host)
				}
			}
			if got := strings.Join(nads.Created, " "); (got != "") != tt.wantCreated || (tt.wantCreated && got != tt.network) {
				t.Errorf("created %q (want it: %v)", got, tt.wantCreated)
			}
			if tt.wantCreated {
				var obj struct {
					Metadata struct{ Labels map[string]string } `json:"metadata"`
					Spec     struct{ Config string }            `json:"spec"`
				}
				if err := json.Unmarshal(nads.Objs[tt.network], &obj); err != nil || obj.Spec.Config != kubetest.K8sNetperfMacvlanConfig ||
					obj.Metadata.Labels[kube.LabelRun] != testRun {
					t.Errorf("the created definition: %+v (%v)", obj, err)
				}
			}
			if err := p.Close(ctx); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(nads.Deleted, " "); (got != "") != tt.wantDeleted || (tt.wantDeleted && got != tt.network) {
				t.Errorf("deleted %q (want it: %v)", got, tt.wantDeleted)
			}
			if tt.existingNAD && len(nads.Objs) != 1 {
				t.Error("a definition the run did not create was deleted")
			}
			_, nsErr := c.cs.CoreV1().Namespaces().Get(ctx, tt.namespace, metav1.GetOptions{})
			if (nsErr == nil) != tt.wantNamespace {
				t.Errorf("namespace %s after Close: %v, want it there: %v", tt.namespace, nsErr, tt.wantNamespace)
			}
		})
	}
}
