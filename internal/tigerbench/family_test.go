package tigerbench

import (
	"context"
	"io"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/fake"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/driver/all"
	"github.com/cnperf/cnperf/internal/kube/kubetest"
	"github.com/cnperf/cnperf/internal/plan"
	kubeplatform "github.com/cnperf/cnperf/internal/platform/kube"
)

// TestCasesTakeTheClustersFamily: a test's cases that name no IP family are measured on the
// family cnperf run would choose on the same nodes (IPv6 when they put IPv6 first), so the
// sockperf server binds "::"; a case that names its family keeps it.
func TestCasesTakeTheClustersFamily(t *testing.T) {
	drv, err := all.Get("sockperf")
	if err != nil {
		t.Fatal(err)
	}
	drivers := map[string]driver.Driver{"sockperf": drv}
	for _, tc := range []struct {
		addr, named, want string
	}{
		{"10.0.0.1", "", ""},
		{"fd00::1", "", "ipv6"},
		{"fd00::1", "ipv4", "ipv4"},
	} {
		n := readyNode("n1", nil)
		n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: tc.addr}}
		cs := kubetest.Authorize(fake.NewClientset(n))
		plat, err := kubeplatform.NewWithClient(kubeplatform.Options{}, "1a2b3c4d-0000-0000-0000-000000000000", io.Discard, cs, nil)
		if err != nil {
			t.Fatal(err)
		}
		c := plan.Case{Profile: api.TCPRR, Path: api.PathPodPodCrossNode, Driver: "sockperf",
			Params: api.Params{DurationSeconds: 1, Samples: 1, IPFamily: tc.named}}
		cases, err := casesOn(context.Background(), plat, []plan.Case{c}, drivers)
		if err != nil {
			t.Fatal(err)
		}
		if got := cases[0].Params.IPFamily; got != tc.want {
			t.Errorf("node at %s, case family %q: measured on %q, want %q", tc.addr, tc.named, got, tc.want)
		}
		servers := driver.Servers(drv, cases)
		v6 := false
		for _, s := range servers {
			for _, a := range s.Argv {
				v6 = v6 || a == "::"
			}
		}
		if v6 != (tc.want == "ipv6") {
			t.Errorf("node at %s, case family %q: servers %v, want one on \"::\": %v", tc.addr, tc.named, servers, tc.want == "ipv6")
		}
	}
}
