package all

import (
	"slices"
	"strings"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/plan"
)

func TestEveryDriverIsListed(t *testing.T) {
	got := strings.Join(Names(), ",")
	for _, want := range []string{"iperf2", "iperf3", "native", "netperf", "qperf", "sockperf", "uperf"} {
		if !strings.Contains(","+got+",", ","+want+",") {
			t.Errorf("driver %s not listed (have %s)", want, got)
		}
	}
}

func c(d string, p api.Profile, mut ...func(*api.Params)) plan.Case {
	cs := plan.Case{Driver: d, Profile: p, Path: api.PathLoopback, Params: api.Params{DurationSeconds: 10, Samples: 1, Parallel: 1}}
	for _, m := range mut {
		m(&cs.Params)
	}
	return cs
}

// TestCapabilitiesAreEnforced: the plan validator (driver.Check) refuses what a tool cannot
// do, naming the drivers that can, before anything runs.
func TestCapabilitiesAreEnforced(t *testing.T) {
	tests := []struct {
		c    plan.Case
		want string // "" = accepted
	}{
		{c("iperf3", api.TCPRR), `driver "iperf3" cannot run profile TCP_RR (drivers that can: iperf2, native, netperf, qperf, sockperf, uperf)`},
		{c("iperf3", api.TCPCRR), `driver "iperf3" cannot run profile TCP_CRR (drivers that can: native, netperf)`},
		{c("qperf", api.TCPMaerts), `cannot run profile TCP_MAERTS`},
		{c("sockperf", api.TCPSendfile), `cannot run profile TCP_SENDFILE`},
		{c("uperf", api.TCPCRR), `cannot run profile TCP_CRR`},
		{c("qperf", api.TCPStream, func(p *api.Params) { p.Parallel = 4 }), `cannot run parallel flows`},
		{c("sockperf", api.TCPRR, func(p *api.Params) { p.Burst = 2 }), `cannot keep several transactions in flight`},
		{c("iperf3", api.TCPStream, func(p *api.Params) { p.Burst = 2 }), `cannot keep several transactions in flight`},
		{c("netperf", api.TCPStream, func(p *api.Params) { p.RateBitsPerSecond = 1e9 }), `cannot limit the send rate`},
		{c("qperf", api.TCPRR, func(p *api.Params) { p.ResponseSizeBytes = 100 }), `response size`},
		{c("sockperf", api.TCPStream, func(p *api.Params) { p.MessageSizeBytes = 131072 }), `above sockperf's maximum of 65507 B`},
		{c("sockperf", api.UDPRR, func(p *api.Params) { p.MessageSizeBytes = 8 }), `below sockperf's minimum`},
		{c("iperf3", api.TCPStream, func(p *api.Params) { p.Options = map[string]string{"iperf3.nonsense": "1"} }), `unknown option "iperf3.nonsense"`},
		{c("native", api.TCPStream, func(p *api.Params) { p.Options = map[string]string{"zerocpy": "1"} }), `unknown option "zerocpy" (did you mean "zerocopy"?)`},
		{c("native", api.TCPStream, func(p *api.Params) { p.Options = map[string]string{"iperf3.bidr": "1"} }), `unknown option "iperf3.bidr" (did you mean "iperf3.bidir"?)`},
		{c("native", api.TCPStream, func(p *api.Params) { p.Options = map[string]string{"netpref.port": "1"} }), `no driver is named "netpref" (did you mean "netperf.port"?)`},
		{c("native", api.TCPRR, func(p *api.Params) { p.Options = map[string]string{"zerocopy": "true"} }), `applies to TCP_STREAM and TCP_MAERTS`},
		{c("native", api.TCPStream, func(p *api.Params) { p.Options = map[string]string{"bidir": "true"} }), ""}, // iperf3's, noted as unused by native
		{c("netperf", api.TCPRR, func(p *api.Params) { p.Burst, p.Parallel, p.ResponseSizeBytes = 4, 8, 1024 }), ""},
		{c("netperf", api.TCPSendfile), ""},
		{c("iperf3", api.UDPStream, func(p *api.Params) { p.Parallel, p.RateBitsPerSecond = 4, 1e9 }), ""},
		{c("qperf", api.UDPRR), ""},
		{c("sockperf", api.UDPRR, func(p *api.Params) { p.MessageSizeBytes = 64 }), ""},
		{c("uperf", api.TCPRR, func(p *api.Params) { p.Parallel, p.ResponseSizeBytes = 8, 1024 }), ""},
	}
	for _, tt := range tests {
		err := Check(tt.c)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s %s refused: %v", tt.c.Driver, tt.c.Profile, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s %s: error %v, want %q", tt.c.Driver, tt.c.Profile, err, tt.want)
		}
	}
}

// TestPortMovers: every tool driver can be moved to free ports on a shared host.
func TestPortMovers(t *testing.T) {
	for _, name := range []string{"iperf2", "iperf3", "qperf", "sockperf", "netperf", "uperf"} {
		d, err := Get(name)
		if err != nil {
			t.Fatal(err)
		}
		m, ok := d.(driver.PortMover)
		if !ok {
			t.Errorf("%s is not a PortMover", name)
			continue
		}
		p := api.TCPRR
		if name == "iperf3" {
			p = api.TCPStream
		}
		cs := c(name, p)
		servers := driver.Servers(d, []plan.Case{cs})
		var distinct []int
		for _, port := range servers[0].Ports {
			seen := false
			for _, x := range distinct {
				seen = seen || x == port.Port
			}
			if !seen {
				distinct = append(distinct, port.Port)
			}
		}
		free := make([]int, len(distinct))
		for i := range free {
			free[i] = 41000 + i
		}
		cs.Params.Options = m.PortOptions(free)
		if cs.Params.Options == nil {
			t.Errorf("%s: no options for %v", name, free)
			continue
		}
		moved := driver.Servers(d, []plan.Case{cs})
		for i, port := range moved[0].Ports {
			old := servers[0].Ports[i].Port
			for j, x := range distinct {
				if x == old && port.Port != free[j] {
					t.Errorf("%s: port %s is %d, want %d", name, port.Name, port.Port, free[j])
				}
			}
		}
		if _, err := client(d, cs, driver.Target{Host: "127.0.0.1"}); err != nil {
			t.Errorf("%s: moved case does not build: %v", name, err)
		}
	}
}

// Every driver whose server can be told an address (driver.Binder) puts it on the server's
// command line with the tool's own flag, and refuses a value that is not an IP address (it
// would otherwise reach an argv). qperf and uperf have no such flag and are not Binders.
func TestBinders(t *testing.T) {
	want := map[string][]string{
		"native": {"--bind", "127.0.0.1"}, "iperf3": {"-B", "127.0.0.1"}, "iperf2": {"-B", "127.0.0.1"},
		"netperf": {"-L", "127.0.0.1"}, "sockperf": {"-i", "127.0.0.1"},
	}
	for _, name := range Names() {
		d, _ := Get(name)
		b, ok := d.(driver.Binder)
		flag, listed := want[name]
		if ok != listed {
			t.Errorf("%s: Binder %v, want %v", name, ok, listed)
			continue
		}
		if !ok {
			continue
		}
		prof := api.TCPRR
		if name == "iperf3" {
			prof = api.TCPStream
		}
		cs := c(name, prof)
		cs.Params.Options = b.BindOptions("127.0.0.1")
		srvs := driver.Servers(d, []plan.Case{cs})
		if len(srvs) == 0 || !strings.Contains(" "+strings.Join(srvs[0].Argv, " ")+" ", " "+strings.Join(flag, " ")+" ") {
			t.Errorf("%s: servers %+v, want %q on the command line", name, srvs, flag)
		}
		cs.Params.Options = map[string]string{"bind": "-x"}
		if err := Check(cs); err == nil || !strings.Contains(err.Error(), "bind") {
			t.Errorf("%s: bind %q accepted (%v)", name, "-x", err)
		}
	}
}

// TestCheckBuildsTheClientCommand: a case a driver's client command refuses is refused by
// driver.Check, before anything runs, for drivers with no Validate of their own.
func TestCheckBuildsTheClientCommand(t *testing.T) {
	for _, tt := range []struct {
		cs   plan.Case
		want string
	}{
		{c("sockperf", api.TCPStream, func(p *api.Params) { p.MessageSizeBytes = 5 }), "message"},
		{c("iperf2", api.TCPRR, func(p *api.Params) { p.MessageSizeBytes = 1 }), "--message-size"},
		{c("sockperf", api.TCPRR, func(p *api.Params) { p.Options = map[string]string{"mps": "x"} }), `"mps"`},
		{c("qperf", api.TCPStream), ""},
		{c("uperf", api.TCPRR), ""},
	} {
		err := Check(tt.cs)
		if tt.want == "" && err != nil {
			t.Errorf("%s %s: %v", tt.cs.Driver, tt.cs.Profile, err)
		}
		if tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s %s size %d: %v, want an error naming %q", tt.cs.Driver, tt.cs.Profile, tt.cs.Params.MessageSizeBytes, err, tt.want)
		}
	}
}

func client(d driver.Driver, c plan.Case, t driver.Target) ([]driver.Command, error) {
	j, err := d.Job(c)
	if err != nil {
		return nil, err
	}
	return j.Client(t, false)
}

// TestListNamesAreDistinct: the list holds each driver once, and Get finds each by its name.
func TestListNamesAreDistinct(t *testing.T) {
	seen := map[string]bool{}
	for _, d := range List() {
		if seen[d.Name()] {
			t.Errorf("driver %s listed twice", d.Name())
		}
		seen[d.Name()] = true
		if got, err := Get(d.Name()); err != nil || got.Name() != d.Name() {
			t.Errorf("Get(%q) = %v, %v", d.Name(), got, err)
		}
	}
	if _, err := Get("netpref"); err == nil || !strings.Contains(err.Error(), "known: "+Joined()) {
		t.Errorf("unknown driver: %v", err)
	}
}

// TestImporters: every driver that can import is offered by cnperf import (iperf2 was left out
// of its hand-typed help), each with a description of what it reads.
func TestImporters(t *testing.T) {
	if got := strings.Join(Importers(), ","); got != "iperf2,iperf3,netperf,qperf,sockperf,uperf" {
		t.Errorf("importers %s", got)
	}
	for _, n := range Importers() {
		d, _ := Get(n)
		for _, line := range strings.Split(d.(driver.Importer).ImportFormats(), "\n") {
			if line == "" || len(line) > 100 {
				t.Errorf("%s: import help line %q", n, line)
			}
		}
	}
}

// TestTools: each driver's tools are what its servers and clients run (argv[0]), derived from
// its jobs, not typed; the guest's exec port runs those of the guest drivers and never a shell.
func TestTools(t *testing.T) {
	want := map[string][]string{
		"native": nil, "netperf": {"netperf", "netserver"}, "iperf3": {"iperf3"}, "uperf": {"sh", "uperf"},
		"qperf": {"qperf"}, "sockperf": {"sockperf"}, "iperf2": {"iperf"},
	}
	for _, d := range List() {
		if got := driver.Tools(d); !slices.Equal(got, want[d.Name()]) {
			t.Errorf("driver.Tools(%s) = %q, want %q", d.Name(), got, want[d.Name()])
		}
	}
	if got := GuestExecTools(); !slices.Equal(got, []string{"iperf3", "netperf", "netserver"}) {
		t.Errorf("GuestExecTools() = %q", got)
	}
	for _, tool := range GuestExecTools() {
		if slices.Contains([]string{"sh", "bash", "busybox", "env", "python3"}, tool) {
			t.Errorf("the guest's exec port would run %s: a shell or interpreter runs anything", tool)
		}
	}
}
