package plan

import (
	"strings"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

func TestCheckNetwork(t *testing.T) {
	for _, tc := range []struct {
		in, wantErr string
	}{
		{"multus-e2e/e2e-bridge", ""},
		{"default/br.netperf", ""},
		{"e2e-bridge", "expected NAMESPACE/NAME"},
		{"/e2e-bridge", "expected NAMESPACE/NAME"},
		{"ns/", "expected NAMESPACE/NAME"},
		{"a/b/c", "expected NAMESPACE/NAME"},
		{"Multus/nad", `namespace "Multus" is not a DNS label`},
		{"ns/Bad_Name", `name "Bad_Name" is not a DNS subdomain`},
	} {
		err := CheckNetwork(tc.in)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("CheckNetwork(%q) = %v, want nil", tc.in, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("CheckNetwork(%q) = %v, want an error containing %q", tc.in, err, tc.wantErr)
		}
	}
}

// A group's network reaches every case's Params; a bad one is refused at its field.
func TestExpandNetwork(t *testing.T) {
	p := &api.Plan{APIVersion: api.APIVersion, Kind: api.KindPlan, Tests: []api.TestGroup{{
		Name: "g", Profiles: []api.Profile{api.TCPRR}, Paths: []api.Path{api.PathPodPodSameNode, api.PathPodPodCrossNode},
		Drivers: []string{"native"}, Network: "multus-e2e/e2e-macvlan"}}}
	cases, err := ExpandWith(p, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 2 || cases[0].Params.Network != "multus-e2e/e2e-macvlan" || cases[1].Params.Network != "multus-e2e/e2e-macvlan" {
		t.Fatalf("cases %+v", cases)
	}
	p.Tests[0].Network = "e2e-macvlan"
	_, err = ExpandWith(p, Options{}, nil)
	if err == nil || !strings.Contains(err.Error(), `tests[0].network: network "e2e-macvlan": expected NAMESPACE/NAME`) {
		t.Errorf("error = %v", err)
	}
}
