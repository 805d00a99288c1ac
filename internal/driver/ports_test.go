package driver_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/driver/iperf2"
	"github.com/cnperf/cnperf/internal/driver/sockperf"
	"github.com/cnperf/cnperf/internal/plan"
)

func familyCase(d string, p api.Profile, fam string, kv ...string) plan.Case {
	c := plan.Case{Profile: p, Driver: d, Path: api.PathPodPodCrossNode,
		Params: api.Params{IPFamily: fam, DurationSeconds: 1, MessageSizeBytes: 64, Options: map[string]string{}}}
	for i := 0; i+1 < len(kv); i += 2 {
		c.Params.Options[kv[i]] = kv[i+1]
	}
	return c
}

// shared lists the ports two differently named servers of cases both listen on.
func shared(drivers map[string]driver.Driver, cases []plan.Case) []string {
	owner := map[string]string{}
	var out []string
	for _, name := range []string{iperf2.Name, sockperf.Name} {
		for _, s := range driver.Servers(drivers[name], cases) {
			for _, p := range s.Ports {
				k := fmt.Sprintf("%s/%d", p.Protocol, p.Port)
				if o, ok := owner[k]; ok && o != s.Name {
					out = append(out, fmt.Sprintf("%s: %s and %s", k, o, s.Name))
				}
				owner[k] = s.Name
			}
		}
	}
	return out
}

// clientPort is the port c's client dials (-p).
func clientPort(t *testing.T, d driver.Driver, c plan.Case) string {
	t.Helper()
	j, err := d.Job(c)
	if err != nil {
		t.Fatal(err)
	}
	cmds, err := j.Client(driver.Target{Host: "2001:db8::a"}, false)
	if err != nil {
		t.Fatal(err)
	}
	argv := cmds[0].Argv
	for i := range argv[:len(argv)-1] {
		if argv[i] == "-p" {
			return argv[i+1]
		}
	}
	t.Fatalf("no -p in %q", argv)
	return ""
}

// TestAllocatePorts: an IPv6 case of iperf2 or sockperf has its own server on the case's port + 1,
// which another case's own port can be (ports 5001 and 5002 in one run): the two servers then
// shared a port and one of them could not listen. AllocatePorts moves the IPv6 server to the next
// free port, the same for every case it serves, and its client dials it; servers of another
// protocol, and cases without a clash, are left as they were.
func TestAllocatePorts(t *testing.T) {
	drivers := map[string]driver.Driver{iperf2.Name: iperf2.Driver{}, sockperf.Name: sockperf.Driver{}}
	for _, tc := range []struct {
		name    string
		cases   []plan.Case
		servers []string // after: name, port
		clients []string // the port each case's client dials
	}{
		{"iperf2: IPv6 on 5001, IPv4 on 5002", []plan.Case{
			familyCase(iperf2.Name, api.TCPRR, "ipv6"),
			familyCase(iperf2.Name, api.TCPRR, "ipv4", "port", "5002"),
		}, []string{"iperf2-v6-5002 TCP/5003", "iperf2-5002 TCP/5002"}, []string{"5003", "5002"}},
		{"sockperf: the IPv6 server of 12000 meets 12001 and 12002 (TCP), not UDP's 12001", []plan.Case{
			familyCase(sockperf.Name, api.TCPRR, "ipv6", "port", "12000"),
			familyCase(sockperf.Name, api.TCPRR, "ipv4", "port", "12001"),
			familyCase(sockperf.Name, api.TCPRR, "ipv4", "port", "12002"),
			familyCase(sockperf.Name, api.UDPRR, "ipv6", "port", "12000"),
			familyCase(sockperf.Name, api.UDPRR, "ipv4", "port", "12002"),
			familyCase(sockperf.Name, api.TCPRR, "ipv6", "port", "12000"), // the same server as the first
		}, []string{"sockperf-tcp-v6-12002 TCP/12003", "sockperf-tcp-12001 TCP/12001", "sockperf-tcp-12002 TCP/12002",
			"sockperf-udp-v6-12000 UDP/12001", "sockperf-udp-12002 UDP/12002"},
			[]string{"12003", "12001", "12002", "12001", "12002", "12003"}},
		{"a port6 the case sets is kept", []plan.Case{
			familyCase(iperf2.Name, api.TCPRR, "ipv6", "iperf2.port6", "7000"),
			familyCase(iperf2.Name, api.TCPRR, "ipv4", "port", "5002"),
		}, []string{"iperf2-v6-6999 TCP/7000", "iperf2-5002 TCP/5002"}, []string{"7000", "5002"}},
		{"no clash: nothing moves", []plan.Case{
			familyCase(iperf2.Name, api.TCPRR, "ipv6"),
			familyCase(iperf2.Name, api.TCPRR, "ipv4"),
		}, []string{"iperf2-v6 TCP/5002", "iperf2 TCP/5001"}, []string{"5002", "5001"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := shared(drivers, tc.cases)
			got := driver.AllocatePorts(tc.cases, drivers)
			if after := shared(drivers, got); len(after) > 0 {
				t.Errorf("servers still share ports: %q", after)
			}
			if strings.HasPrefix(tc.name, "no clash") || strings.HasPrefix(tc.name, "a port6") {
				if &got[0] != &tc.cases[0] && !reflect.DeepEqual(got, tc.cases) {
					t.Errorf("cases changed: %+v", got)
				}
			} else if len(before) == 0 {
				t.Errorf("the cases share no port to begin with: the test tests nothing")
			}
			var servers []string
			for _, name := range []string{iperf2.Name, sockperf.Name} {
				for _, s := range driver.Servers(drivers[name], got) {
					servers = append(servers, fmt.Sprintf("%s %s/%d", s.Name, s.Ports[0].Protocol, s.Ports[0].Port))
				}
			}
			if !reflect.DeepEqual(servers, tc.servers) {
				t.Errorf("servers\n got %q\nwant %q", servers, tc.servers)
			}
			var clients []string
			for _, c := range got {
				clients = append(clients, clientPort(t, drivers[c.Driver], c))
			}
			if !reflect.DeepEqual(clients, tc.clients) {
				t.Errorf("client ports %q, want %q", clients, tc.clients)
			}
			for i := range tc.cases {
				if o := tc.cases[i].Params.Options; o["port6"] != "" && o["iperf2.port6"] == "" {
					t.Errorf("the caller's case %d was changed: %v", i, o)
				}
			}
		})
	}
}
