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
)

// k8s-netperf's DeployNADMacvlan (pkg/k8s/kubernetes.go) creates, for --macvlan eth0:
const k8sNetperfMacvlanConfig = `{"cniVersion": "0.3.1", "type": "macvlan", "master": "eth0", "mode": "bridge", ` +
	`"ipam": {"type": "whereabouts", "range": "192.168.200.0/24"}}`

func TestMacvlanDefinition(t *testing.T) {
	tests := []struct {
		name, master, cidr, ipam string // ipam "" = WhereaboutsIPAM(cidr)
		want, wantErr            string
	}{
		{name: "k8s-netperf's", master: "eth0", cidr: DefaultMacvlanRange, want: k8sNetperfMacvlanConfig},
		{name: "a range", master: "ens1f0", cidr: "10.127.0.0/24",
			want: `{"cniVersion": "0.3.1", "type": "macvlan", "master": "ens1f0", "mode": "bridge", "ipam": {"type": "whereabouts", "range": "10.127.0.0/24"}}`},
		{name: "IPv6 range", master: "eth0", cidr: "fd00:127::/64",
			want: `{"cniVersion": "0.3.1", "type": "macvlan", "master": "eth0", "mode": "bridge", "ipam": {"type": "whereabouts", "range": "fd00:127::/64"}}`},
		{name: "an IPAM object", master: "eth0", ipam: "{\n  \"type\": \"host-local\",\n  \"subnet\": \"10.9.0.0/24\"\n}",
			want: `{"cniVersion": "0.3.1", "type": "macvlan", "master": "eth0", "mode": "bridge", "ipam": {"type":"host-local","subnet":"10.9.0.0/24"}}`},
		{name: "host bits", master: "eth0", cidr: "10.127.0.1/24", wantErr: `"10.127.0.1/24" has host bits set: the network is 10.127.0.0/24`},
		{name: "not a CIDR", master: "eth0", cidr: "10.127.0.0", wantErr: `"10.127.0.0" is not a network in CIDR notation (e.g. 192.168.200.0/24)`},
		{name: "no master", master: "", cidr: DefaultMacvlanRange, wantErr: "the master interface name is empty"},
		{name: "long master", master: "a-very-long-name0", cidr: DefaultMacvlanRange, wantErr: "longer than 15 characters"},
		{name: "quote in master", master: `eth0"`, cidr: DefaultMacvlanRange, wantErr: "holds '/', ':', a quote"},
		{name: "IPAM not JSON", master: "eth0", ipam: "whereabouts", wantErr: "the IPAM configuration is not a JSON object"},
		{name: "IPAM without type", master: "eth0", ipam: `{"range": "10.0.0.0/24"}`, wantErr: `names no IPAM plugin (no "type")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ipam, err := tt.ipam, error(nil)
			if ipam == "" {
				ipam, err = WhereaboutsIPAM(tt.cidr)
			}
			var d *NetworkDefinition
			if err == nil {
				d, err = MacvlanDefinition(tt.master, ipam)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d.Name != "macvlan-netperf" || d.Config != tt.want {
				t.Errorf("definition %s:\n got %s\nwant %s", d.Name, d.Config, tt.want)
			}
			if a, err := parseNAD("cnperf/"+d.Name, []byte(`{"spec":{"config":`+jsonString(d.Config)+`}}`)); err != nil || a.Type != "macvlan" {
				t.Errorf("the configuration does not read back as macvlan: %+v, %v", a, err)
			}
		})
	}
}

func jsonString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

// A run with CreateNetwork creates the definition in its namespace after the namespace and before
// the pods, measures on it, and deletes it at the end, but only what it created: in a namespace it
// created, the definition goes with the namespace; in one it found, it is deleted by name; one
// that exists already is neither used nor deleted.
func TestCreateNetwork(t *testing.T) {
	def, err := MacvlanDefinition("eth0", `{"type": "whereabouts", "range": "192.168.200.0/24"}`)
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
			nads := &memNADs{}
			if tt.existingNAD {
				nads.objs = map[string][]byte{tt.namespace + "/" + def.Name: []byte(testBridgeNAD)}
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
					if pod.Annotations[annotationNetworks] == tt.network {
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
			if got := strings.Join(nads.created, " "); (got != "") != tt.wantCreated || (tt.wantCreated && got != tt.network) {
				t.Errorf("created %q (want it: %v)", got, tt.wantCreated)
			}
			if tt.wantCreated {
				var obj struct {
					Metadata struct{ Labels map[string]string } `json:"metadata"`
					Spec     struct{ Config string }            `json:"spec"`
				}
				if err := json.Unmarshal(nads.objs[tt.network], &obj); err != nil || obj.Spec.Config != k8sNetperfMacvlanConfig ||
					obj.Metadata.Labels[kube.LabelRun] != testRun {
					t.Errorf("the created definition: %+v (%v)", obj, err)
				}
			}
			if err := p.Close(ctx); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(nads.deleted, " "); (got != "") != tt.wantDeleted || (tt.wantDeleted && got != tt.network) {
				t.Errorf("deleted %q (want it: %v)", got, tt.wantDeleted)
			}
			if tt.existingNAD && len(nads.objs) != 1 {
				t.Error("a definition the run did not create was deleted")
			}
			_, nsErr := c.cs.CoreV1().Namespaces().Get(ctx, tt.namespace, metav1.GetOptions{})
			if (nsErr == nil) != tt.wantNamespace {
				t.Errorf("namespace %s after Close: %v, want it there: %v", tt.namespace, nsErr, tt.wantNamespace)
			}
		})
	}
}
