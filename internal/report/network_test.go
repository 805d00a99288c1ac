package report

import (
	"path/filepath"
	"strings"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/report/reporttest"
	"github.com/cnperf/cnperf/internal/runfile"
)

// A case on a secondary network names it in k8s-netperf's Bridge Info or Macvlan Info column as
// k8s-netperf does, by the flag that put it there, not by the definition's plugin: --macvlan's
// macvlan-netperf in Macvlan Info (macvlan/MASTER), any other (its --bridge takes a macvlan or an
// ipvlan definition too) in Bridge Info (NAMESPACE/NAME); other cases leave both empty.
func TestK8sNetperfNetworkCells(t *testing.T) {
	on := func(network, typ, master string) *api.Result {
		return &api.Result{Placement: &api.Placement{Attachment: &api.Attachment{Network: network, Type: typ, Master: master}}}
	}
	// a network one of k8s-netperf's modes made: its UDN Info or SR-IOV Info, as
	// cmd/k8s-netperf executeWorkload writes them (fb9a2ec), whatever the definition's plugin
	mode := func(network, typ, kind, value string) *api.Result {
		r := on(network, typ, "")
		r.Placement.Attachment.Mode = &api.NetworkMode{Kind: kind, Value: value}
		return r
	}
	// VMs on it (k8s-netperf's --vm --bridge): the server VM's address in Bridge Info
	vmOn := func(network string, server bool) *api.Result {
		r := on(network, "bridge", "")
		r.Placement.Attachment.ServerIP = "10.10.10.12"
		r.Placement.Client.VM = &api.VM{Name: "c"}
		if server {
			r.Placement.Server.VM = &api.VM{Name: "s"}
		}
		if !k8sNetperfVM(r) {
			t.Errorf("%s: VM mode false", network)
		}
		return r
	}
	if k8sNetperfVM(on("a/b", "bridge", "")) || k8sNetperfVM(&api.Result{}) {
		t.Error("VM mode true without a VM")
	}
	for _, tc := range []struct {
		name                        string
		r                           *api.Result
		udn, bridge, sriov, macvlan string
	}{
		{"default network", &api.Result{}, "", "", "", ""},
		{"no attachment", &api.Result{Placement: &api.Placement{}}, "", "", "", ""},
		{"bridge", on("multus-e2e/n", "bridge", ""), "", "multus-e2e/n", "", ""},
		{"--macvlan's", on("cnperf/macvlan-netperf", "macvlan", "eth0"), "", "", "", "macvlan/eth0"},
		{"another macvlan definition (k8s-netperf's --bridge)", on("multus-e2e/e2e-macvlan", "macvlan", "eth0"), "", "multus-e2e/e2e-macvlan", "", ""},
		{"ipvlan", on("multus-e2e/n", "ipvlan", "eth0"), "", "multus-e2e/n", "", ""},
		{"--udnl2", mode("perf/udn-primary-netperf", "ovn-k8s-cni-overlay", "udn", "layer2"), "layer2", "", "", ""},
		{"--udnl3", mode("perf/udn-primary-netperf", "ovn-k8s-cni-overlay", "udn", "layer3"), "layer3", "", "", ""},
		{"--cudn layer2", mode("perf/cudn-secondary-netperf", "bridge", "cudn", "layer2"), "Cudn -layer2", "", "", ""},
		{"--cudn Layer3 (as given)", mode("perf/cudn-secondary-netperf", "ovn-k8s-cni-overlay", "cudn", "Layer3"), "Cudn -Layer3", "", "", ""},
		{"--sriov ens1f0", mode("perf/sriov-netperf", "sriov", "sriov", "ens1f0"), "", "", "sriov/ens1f0", ""},
		{"--vm --bridge br0", vmOn("perf/br-netperf", true), "", "VM Bridge (10.10.10.12)", "", ""},
		{"--vm=client --network", vmOn("perf/n", false), "", "perf/n", "", ""},
	} {
		u, b, s, m := k8sNetperfNetworkCells(tc.r)
		if u != tc.udn || b != tc.bridge || s != tc.sriov || m != tc.macvlan {
			t.Errorf("%s: UDN Info %q, Bridge Info %q, SR-IOV Info %q, Macvlan Info %q; want %q, %q, %q and %q",
				tc.name, u, b, s, m, tc.udn, tc.bridge, tc.sriov, tc.macvlan)
		}
	}
}

// A case on a secondary network says "+net" in the table's PATH cell, and a footnote names the
// network with what the run found it to be.
func TestTableSecondaryNetwork(t *testing.T) {
	r := api.Result{Profile: api.TCPRR, Driver: "native", Path: api.PathPodPodCrossNode,
		Params:    api.Params{Network: "multus-e2e/e2e-bridge"},
		Placement: &api.Placement{Attachment: &api.Attachment{Network: "multus-e2e/e2e-bridge", Type: "bridge", MTUBytes: 1500}}}
	if got := pathCell(&r, false); got != "pod-pod-cross-node+net" {
		t.Errorf("path cell %q", got)
	}
	plain := api.Result{Path: api.PathPodPodCrossNode}
	if got := pathCell(&plain, false); got != "pod-pod-cross-node" {
		t.Errorf("default network's path cell %q", got)
	}
	notes := networkNotes([]api.Result{plain, r, r})
	if len(notes) != 1 || notes[0] != "+net: on secondary network multus-e2e/e2e-bridge (CNI plugin bridge, MTU 1500)" {
		t.Errorf("notes %q", notes)
	}
	// a network one of k8s-netperf's modes made names its flag; a primary UDN is not secondary
	for _, tc := range []struct {
		mode *api.NetworkMode
		want string
	}{
		{&api.NetworkMode{Flag: "--cudn layer2", Kind: "cudn"}, "+net: on secondary network perf/n (--cudn layer2, CNI plugin bridge, MTU 1500)"},
		{&api.NetworkMode{Flag: "--udnl2", Kind: "udn", Primary: true}, "+net: on primary network perf/n (--udnl2, CNI plugin bridge, MTU 1500)"},
	} {
		m := api.Result{Params: api.Params{Network: "perf/n"},
			Placement: &api.Placement{Attachment: &api.Attachment{Network: "perf/n", Type: "bridge", MTUBytes: 1500, Mode: tc.mode}}}
		if notes := networkNotes([]api.Result{m}); len(notes) != 1 || notes[0] != tc.want {
			t.Errorf("%s: notes %q, want %q", tc.mode.Flag, notes, tc.want)
		}
	}
	// NetworkPolicies that select the pods are named as not applied, once each
	withPolicy := r
	a := *r.Placement.Attachment
	a.PoliciesNotApplied = []string{"perf/deny-all", "perf/egress"}
	withPolicy.Placement = &api.Placement{Attachment: &a}
	notes = networkNotes([]api.Result{plain, withPolicy, withPolicy, r})
	want := "+net: NetworkPolicy perf/deny-all, perf/egress selects the measured pods but does not apply on a secondary network " +
		"(NetworkPolicy covers the cluster's own network): the +net figures are unfiltered"
	if len(notes) != 2 || notes[1] != want {
		t.Errorf("notes %q, want the network's and %q", notes, want)
	}
}

// TestK8sNetperfCSVOfARealCUDNRun: the k8s-netperf CSV of a real run with --cudn layer2
// (TestNetworkModesPlayedOVNKubernetes on the shared Calico + Multus cluster, 2026-11-29 08:15 UTC:
// OVN-Kubernetes's controller played by the test, the definition a bridge with whereabouts; native
// TCP_STREAM, TCP_RR, TCP_CRR, same node and cross node, 2 s x 2): UDN Info "Cudn -layer2" on every
// row, as k8s-netperf writes it for --cudn layer2, the other network columns empty.
func TestK8sNetperfCSVOfARealCUDNRun(t *testing.T) {
	runs, err := runfile.Read(filepath.Join("testdata", "real-cudn-run.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	out := encode(t, "k8s-netperf-csv", runs...)
	reporttest.Golden(t, "k8s-netperf-real-cudn.csv", out)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 7 {
		t.Fatalf("%d lines, want the header and 6 rows", len(lines))
	}
	for _, l := range lines[1:] {
		if !strings.Contains(l, ",false,false,false,Cudn -layer2,,,,,") {
			t.Errorf("row %q: want UDN Info 'Cudn -layer2', the other network columns empty", l)
		}
	}
}
