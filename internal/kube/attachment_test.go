package kube

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cnperf/cnperf/internal/kube/kubetest"
)

func TestParseNAD(t *testing.T) {
	tests := []struct {
		name, raw       string
		wantType        string
		wantMTU         int
		wantMaster      string
		wantErrContains string
	}{
		{name: "bridge", raw: kubetest.BridgeNAD, wantType: "bridge", wantMTU: 1500},
		{name: "macvlan without mtu", raw: `{"kind":"NetworkAttachmentDefinition","spec":{"config":"{\"type\":\"macvlan\",\"master\":\"eth0\"}"}}`,
			wantType: "macvlan", wantMaster: "eth0"},
		{name: "list", raw: `{"spec":{"config":"{\"cniVersion\":\"0.4.0\",\"plugins\":[{\"type\":\"bridge\",\"mtu\":9000},{\"type\":\"tuning\"}]}"}}`,
			wantType: "bridge", wantMTU: 9000},
		{name: "file on the nodes", raw: `{"kind":"NetworkAttachmentDefinition","spec":{}}`},
		{name: "not a NAD", raw: `{"kind":"Status"}`, wantErrContains: "the API answered a Status, not a NetworkAttachmentDefinition"},
		{name: "bad config", raw: `{"spec":{"config":"{"}}`, wantErrContains: "spec.config is not a CNI configuration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := ParseNAD("ns/x", []byte(tt.raw))
			if tt.wantErrContains != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErrContains) {
					t.Fatalf("error = %v, want %q", err, tt.wantErrContains)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.Network != "ns/x" || a.Type != tt.wantType || a.MTUBytes != tt.wantMTU || a.Master != tt.wantMaster {
				t.Errorf("attachment %+v, want type %q mtu %d master %q", a, tt.wantType, tt.wantMTU, tt.wantMaster)
			}
		})
	}
}

func TestAttachmentOf(t *testing.T) {
	pod := func(status string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "srv"}}
		if status != "" {
			p.Annotations = map[string]string{AnnotationNetworkStatus: status}
		}
		return p
	}
	status := `[{"name":"k8s-pod-network","interface":"eth0","ips":["10.244.1.5"],"default":true},` +
		`{"name":"multus-e2e/e2e-macvlan","interface":"net1","ips":["10.126.0.3","fd00::3"],"mac":"aa:bb:cc:dd:ee:ff","mtu":1500}]`
	tests := []struct {
		name, status, network, family string
		iface, ip                     string
		mtu                           int
		wantErr                       string
	}{
		{name: "ipv4", status: status, network: "multus-e2e/e2e-macvlan", iface: "net1", ip: "10.126.0.3", mtu: 1500},
		{name: "ipv6", status: status, network: "multus-e2e/e2e-macvlan", family: "ipv6", iface: "net1", ip: "fd00::3", mtu: 1500},
		{name: "other network", status: status, network: "multus-e2e/e2e-bridge",
			wantErr: "pod srv is not attached to multus-e2e/e2e-bridge (its network status names k8s-pod-network, multus-e2e/e2e-macvlan)"},
		{name: "no status", network: "ns/x", wantErr: "pod srv has no k8s.v1.cni.cncf.io/network-status annotation: Multus did not attach it"},
		{name: "no address", status: `[{"name":"ns/x","interface":"net1","ips":[]}]`, network: "ns/x",
			wantErr: "pod srv has no IP address on ns/x (interface net1, addresses )"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			iface, ip, mtu, err := AttachmentOf(pod(tt.status), tt.network, tt.family)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if iface != tt.iface || ip != tt.ip || mtu != tt.mtu {
				t.Errorf("got %s %s %d, want %s %s %d", iface, ip, mtu, tt.iface, tt.ip, tt.mtu)
			}
		})
	}
}

// The networks --pod-annotations asks for stay on an attachment pod, the run's network after
// them, in the form the user wrote; a list that cannot be read stops the run before anything.
func TestMergeNetworks(t *testing.T) {
	const n = "multus-e2e/e2e-bridge"
	for _, tt := range []struct {
		user, want, wantErr string
	}{
		{user: "", want: n},
		{user: "other/net1", want: "other/net1," + n},
		{user: "other/net1@eth9, other/net2", want: "other/net1@eth9, other/net2," + n},
		{user: "other/net1," + n + "@net7", want: "other/net1," + n + "@net7"},
		{user: `[{"name":"net1","namespace":"other"}]`, want: `[{"name":"net1","namespace":"other"},{"name":"e2e-bridge","namespace":"multus-e2e"}]`},
		{user: `[{"name":"e2e-bridge","namespace":"multus-e2e","interface":"net5"}]`, want: `[{"name":"e2e-bridge","namespace":"multus-e2e","interface":"net5"}]`},
		{user: `[{"name":`, wantErr: `--pod-annotations k8s.v1.cni.cncf.io/networks: "[{\"name\":" is not a JSON list of network selection elements`},
		{user: "a/b,,c/d", wantErr: `--pod-annotations k8s.v1.cni.cncf.io/networks: "a/b,,c/d" has an empty element`},
	} {
		got, err := MergeNetworks(tt.user, n)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%q: error %v, want %q", tt.user, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%q: got %q (%v), want %q", tt.user, got, err, tt.want)
		}
	}
}
