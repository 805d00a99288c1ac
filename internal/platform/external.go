package platform

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/cnperf/cnperf/internal/driver"
)

// ParseExternal splits --external's "HOST[:PORT[,PORT...]]": the target of the
// external-service path on every platform. An IPv6 host goes in brackets when ports follow;
// the brackets are not part of the host returned ("[2001:db8::1]" alone is 2001:db8::1 too).
func ParseExternal(v string) (host string, ports []int, err error) {
	host, portList := v, ""
	if h, p, err := net.SplitHostPort(v); err == nil {
		host, portList = h, p
	} else if i := strings.LastIndex(v, ":"); i > 0 && !strings.Contains(v[:i], ":") {
		host, portList = v[:i], v[i+1:]
	}
	host = strings.Trim(host, "[]")
	if host == "" {
		return "", nil, fmt.Errorf("--external %q: no host", v)
	}
	if portList != "" {
		for _, f := range strings.Split(portList, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 || n > 65535 {
				return "", nil, fmt.Errorf("--external %q: %q is not a port (1-65535)", v, f)
			}
			ports = append(ports, n)
		}
	}
	return host, ports, nil
}

// ExternalPorts is where a client dials servers' ports on the external-service path: the
// ports --external gives replace the servers' ports in order (the first given port replaces
// the first server's first port, and so on); nil when it gives none (the servers' own ports).
func ExternalPorts(servers []driver.Server, ports []int) map[int]int {
	if len(ports) == 0 {
		return nil
	}
	m := map[int]int{}
	i := 0
	for _, s := range servers {
		for _, port := range s.Ports {
			if i == len(ports) {
				return m
			}
			m[port.Port] = ports[i]
			i++
		}
	}
	return m
}
