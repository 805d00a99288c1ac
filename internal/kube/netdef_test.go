package kube

import (
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/kube/kubetest"
)

func TestMacvlanDefinition(t *testing.T) {
	tests := []struct {
		name, master, cidr, ipam string // ipam "" = WhereaboutsIPAM(cidr)
		want, wantErr            string
	}{
		{name: "k8s-netperf's", master: "eth0", cidr: DefaultMacvlanRange, want: kubetest.K8sNetperfMacvlanConfig},
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
			if a, err := ParseNAD("cnperf/"+d.Name, []byte(`{"spec":{"config":`+jsonString(d.Config)+`}}`)); err != nil || a.Type != "macvlan" {
				t.Errorf("the configuration does not read back as macvlan: %+v, %v", a, err)
			}
		})
	}
}

func jsonString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}
