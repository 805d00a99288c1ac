package report

import (
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// A case measured on a bridge or macvlan NetworkAttachmentDefinition names it in k8s-netperf's
// Bridge Info or Macvlan Info column; other cases leave both empty.
func TestK8sNetperfNetworkCells(t *testing.T) {
	on := func(typ string) *api.Result {
		return &api.Result{Placement: &api.Placement{Attachment: &api.Attachment{Network: "multus-e2e/n", Type: typ}}}
	}
	for _, tc := range []struct {
		name            string
		r               *api.Result
		bridge, macvlan string
	}{
		{"default network", &api.Result{}, "", ""},
		{"no attachment", &api.Result{Placement: &api.Placement{}}, "", ""},
		{"bridge", on("bridge"), "multus-e2e/n", ""},
		{"macvlan", on("macvlan"), "", "multus-e2e/n"},
		{"ipvlan", on("ipvlan"), "", ""},
	} {
		b, m := k8sNetperfNetworkCells(tc.r)
		if b != tc.bridge || m != tc.macvlan {
			t.Errorf("%s: Bridge Info %q, Macvlan Info %q; want %q and %q", tc.name, b, m, tc.bridge, tc.macvlan)
		}
	}
}
