package mesh

import (
	"fmt"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/driver/all"
	"github.com/cnperf/cnperf/internal/plan"
)

// TestServerPortOptionsEveryDriver: --all-to-one --concurrent gives each client a server of its
// own on ports of its own, with every driver that can move its server. Before, a driver whose
// server has one port (iperf3, iperf2, sockperf) was refused: "driver iperf3 cannot move its
// server to ports 7202,7203". The servers of both families get distinct ports.
func TestServerPortOptionsEveryDriver(t *testing.T) {
	const n = 3
	for _, name := range all.Names() {
		d, _ := all.Get(name)
		if _, ok := d.(driver.PortMover); !ok {
			continue
		}
		t.Run(name, func(t *testing.T) {
			opts, err := ServerPortOptions(d, 7200, n)
			if err != nil || len(opts) != n {
				t.Fatalf("%d options, %v", len(opts), err)
			}
			owner := map[string]string{}
			for _, fam := range []string{"ipv4", "ipv6"} {
				c := plan.Case{Driver: name, Profile: d.Capabilities().Profiles[0], Path: api.PathPodPodCrossNode,
					Params: api.Params{DurationSeconds: 10, Samples: 1, Parallel: 1, MessageSizeBytes: 64, IPFamily: fam}}
				for i, o := range opts {
					ci := c
					ci.Params.Options = o
					for _, s := range driver.Servers(d, []plan.Case{ci}) {
						for _, p := range s.Ports {
							k := fmt.Sprintf("%s/%d", p.Protocol, p.Port)
							who := fmt.Sprintf("server %d %s", i, s.Name)
							if w, ok := owner[k]; ok && w != who {
								t.Errorf("%s: %s and %s", k, w, who)
							}
							owner[k] = who
						}
					}
				}
			}
		})
	}
}
