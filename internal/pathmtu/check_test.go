package pathmtu

import (
	"context"
	"fmt"
	"strings"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/platform"
)

// echoExec answers `cnperf agent mtu --target X` as an agent on a path with limit would, and
// records what it ran.
type echoExec struct {
	from   string
	ifMTU  int
	limit  int
	argv   []string
	failed error
}

func (e *echoExec) Exec(_ context.Context, cmd driver.Command) driver.Output {
	e.argv = cmd.Argv
	if e.failed != nil {
		return driver.Output{ExitCode: -1, Err: e.failed}
	}
	largest := min(e.limit, e.ifMTU)
	return driver.Output{Stdout: []byte(fmt.Sprintf(`{"from":%q,"to":%q,"interfaceMTUBytes":%d,"largestBytes":%d,"probes":1}`,
		e.from, cmd.Argv[4], e.ifMTU, largest))}
}

func TestCheck(t *testing.T) {
	pl := func(clientIP, serverPodIP, serverHostIP string) *api.Placement {
		return &api.Placement{Client: api.Endpoint{PodIP: clientIP}, Server: api.Endpoint{PodIP: serverPodIP, HostIP: serverHostIP}}
	}
	tests := []struct {
		name             string
		placement        *api.Placement
		client, server   *echoExec
		finding, errText string
		fwdTo, revTo     string
	}{
		{name: "healthy", placement: pl("10.0.1.5", "10.0.2.7", ""), client: &echoExec{from: "10.0.1.5", ifMTU: 1450, limit: 1450},
			server: &echoExec{from: "10.0.2.7", ifMTU: 1450, limit: 1450}, fwdTo: "10.0.2.7", revTo: "10.0.1.5"},
		{name: "host-network server: its node address", placement: pl("10.0.1.5", "", "192.168.0.3"),
			client: &echoExec{ifMTU: 1500, limit: 1500}, server: &echoExec{ifMTU: 1500, limit: 1500}, fwdTo: "192.168.0.3", revTo: "10.0.1.5"},
		{name: "black hole", placement: pl("10.0.1.5", "10.0.2.7", ""), client: &echoExec{ifMTU: 1500, limit: 1450},
			server: &echoExec{ifMTU: 1500, limit: 1450}, finding: FindingBlackHole, fwdTo: "10.0.2.7", revTo: "10.0.1.5"},
		{name: "no server executor", placement: pl("10.0.1.5", "10.0.2.7", ""), client: &echoExec{},
			errText: "not probed: cnperf cannot run commands beside this path's server", fwdTo: "10.0.2.7", revTo: "10.0.1.5"},
		{name: "several backends", placement: pl("10.0.1.5", "", ""), client: &echoExec{}, server: &echoExec{},
			errText: "not probed: the server has no single address", revTo: "10.0.1.5"},
		{name: "client outside", placement: pl("", "10.0.2.7", ""), client: &echoExec{}, server: &echoExec{},
			errText: "not probed: the client has no address", fwdTo: "10.0.2.7"},
		{name: "exec fails", placement: pl("10.0.1.5", "10.0.2.7", ""), client: &echoExec{failed: fmt.Errorf("pod gone")},
			server: &echoExec{failed: fmt.Errorf("pod gone")}, errText: "cnperf agent mtu printed no result: pod gone",
			fwdTo: "10.0.2.7", revTo: "10.0.1.5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pair := &platform.Pair{Client: tt.client, Placement: tt.placement}
			if tt.server != nil {
				pair.Server = tt.server
			}
			m := Check(context.Background(), api.PathPodPodCrossNode, pair, DefaultOptions())
			if m.Finding != tt.finding {
				t.Errorf("finding %q, want %q", m.Finding, tt.finding)
			}
			for _, p := range []api.PathMTUProbe{m.Forward, m.Reverse} {
				if (p.Error == "") != (tt.errText == "") || !strings.Contains(p.Error, tt.errText) {
					t.Errorf("error %q, want %q", p.Error, tt.errText)
				}
			}
			if m.Forward.To != tt.fwdTo || m.Reverse.To != tt.revTo {
				t.Errorf("targets %q, %q; want %q, %q", m.Forward.To, m.Reverse.To, tt.fwdTo, tt.revTo)
			}
			if probed := !strings.Contains(tt.errText, "not probed"); probed != (len(tt.client.argv) > 0) ||
				probed && strings.Join(tt.client.argv[:5], " ") != "cnperf agent mtu --target "+tt.fwdTo {
				t.Errorf("client ran %v", tt.client.argv)
			}
		})
	}
}
