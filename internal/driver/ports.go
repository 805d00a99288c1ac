package driver

import (
	"strings"

	"github.com/cnperf/cnperf/internal/plan"
)

// FamilyPorter is implemented by drivers whose IPv6 case has a server of its own on a port of
// its own (toolkit.FamilyServer: iperf2, sockperf), so AllocatePorts can keep that port off
// the ports of the run's other servers.
type FamilyPorter interface {
	// Port6Options returns the case options that put an IPv6 case's server on port.
	Port6Options(port int) map[string]string
}

// AllocatePorts is the one allocation of the server ports of a run's cases (drivers by name):
// every server keeps the port its case's options give (or the driver's default) but the IPv6
// server of a FamilyPorter driver's case, whose port was simply the case's port + 1 and could
// be another server's own (an IPv4 case on that port), which then gets the next port no server
// of the run takes (the same port for every case it serves), set in its case's options. An
// IPv6 port a case sets itself (port6) is kept. The cases come back in order, with only those
// options changed; a run with no such clash gets its cases unchanged.
func AllocatePorts(cases []plan.Case, drivers map[string]Driver) []plan.Case {
	type portKey struct {
		port  int
		proto string
	}
	owner := map[portKey]string{} // a port → the server ("driver/name") that has it
	claim := func(d Driver, s Server) {
		for _, p := range s.Ports {
			if _, ok := owner[portKey{p.Port, p.Protocol}]; !ok {
				owner[portKey{p.Port, p.Protocol}] = d.Name() + "/" + s.Name
			}
		}
	}
	movable := func(c plan.Case) (Driver, FamilyPorter, bool) {
		d := drivers[c.Driver]
		fp, ok := d.(FamilyPorter)
		if !ok || !strings.EqualFold(c.Params.IPFamily, "ipv6") {
			return d, nil, false
		}
		for k := range c.Params.Options {
			if k == "port6" || k == c.Driver+".port6" {
				return d, nil, false
			}
		}
		return d, fp, true
	}
	for _, c := range cases {
		if d, _, move := movable(c); d != nil && !move {
			for _, s := range Servers(d, []plan.Case{c}) {
				claim(d, s)
			}
		}
	}
	var out []plan.Case
	given := map[string]int{} // a moved server ("driver/name" as it was) → its port
	for i, c := range cases {
		d, fp, move := movable(c)
		if !move {
			continue
		}
		for _, s := range Servers(d, []plan.Case{c}) {
			if len(s.Ports) != 1 {
				continue
			}
			id, p := d.Name()+"/"+s.Name, s.Ports[0]
			port, done := given[id]
			if !done {
				port = p.Port
				for port <= 65535 {
					o, taken := owner[portKey{port, p.Protocol}]
					if !taken || o == id {
						break
					}
					port++
				}
				if port > 65535 {
					port = p.Port // none free above it: the platform's own check says so
				}
				given[id] = port
				owner[portKey{port, p.Protocol}] = id
			}
			if port == p.Port {
				continue
			}
			if out == nil {
				out = append([]plan.Case(nil), cases...)
			}
			out[i].Params.Options = plan.MergeOptions(c.Params.Options, fp.Port6Options(port))
		}
	}
	if out == nil {
		return cases
	}
	return out
}
