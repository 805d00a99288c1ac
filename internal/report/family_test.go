package report

import (
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// The PATH cell names the IP family: IPv6 always (" v6"); IPv4 only in a run that has both
// (--ip-family dual), so single-family runs print as before.
func TestPathCellFamily(t *testing.T) {
	res := func(fam string) api.Result {
		return api.Result{Path: api.PathPodPodCrossNode, Params: api.Params{IPFamily: fam}}
	}
	for _, tc := range []struct {
		name    string
		results []api.Result
		want    []string
	}{
		{"ipv4 only", []api.Result{res("ipv4"), res("")}, []string{"pod-pod-cross-node", "pod-pod-cross-node"}},
		{"ipv6 only", []api.Result{res("ipv6")}, []string{"pod-pod-cross-node v6"}},
		{"dual", []api.Result{res("ipv4"), res("ipv6")}, []string{"pod-pod-cross-node v4", "pod-pod-cross-node v6"}},
	} {
		mark := mixedFamilies(tc.results)
		for i := range tc.results {
			if got := pathCell(&tc.results[i], mark); got != tc.want[i] {
				t.Errorf("%s: result %d: path cell %q, want %q", tc.name, i, got, tc.want[i])
			}
		}
	}
}
