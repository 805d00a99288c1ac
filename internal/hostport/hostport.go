// Package hostport finds ports on this host that nothing uses now and that the kernel will not
// hand to anyone else in the meantime: a block of consecutive ports free for TCP and UDP,
// chosen below (or above) the kernel's ephemeral range.
//
// A port taken with listen(":0") and released is in the ephemeral range
// (net.ipv4.ip_local_port_range), the one the kernel picks source ports of outgoing
// connections from: on a busy host (loopback CRR tests make tens of thousands of connections a
// second) it is soon some connection's source port, and a server that binds it later fails
// "bind: address already in use". Outside that range only a program that names the port can
// take it; the random start makes two callers at once unlikely to pick the same block, and
// callers that must not collide at all serialise between them (the local platform's lock).
package hostport

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// rangeFile is the kernel's ephemeral port range ("32768\t60999" by default).
const rangeFile = "/proc/sys/net/ipv4/ip_local_port_range"

// lowest is the lowest port Block picks: above the well-known and most registered service
// ports.
const lowest = 10000

// Block returns the first of n consecutive ports (1 ≤ n ≤ 1000) that nothing listens on for
// TCP or UDP, on any address, when asked, all outside the kernel's ephemeral range.
func Block(n int) (int, error) {
	if n < 1 || n > 1000 {
		return 0, fmt.Errorf("hostport: %d ports asked for, want 1..1000", n)
	}
	lo, hi := ephemeral()
	bases := spans(lo, hi, n)
	total := 0
	for _, s := range bases {
		total += s[1] - s[0] + 1
	}
	if total == 0 {
		return 0, fmt.Errorf("hostport: no %d consecutive ports outside the ephemeral range %d-%d", n, lo, hi)
	}
	for try := 0; try < 100; try++ {
		k := rand.IntN(total)
		base := 0
		for _, s := range bases {
			if k < s[1]-s[0]+1 {
				base = s[0] + k
				break
			}
			k -= s[1] - s[0] + 1
		}
		if free(base, n) {
			return base, nil
		}
	}
	return 0, fmt.Errorf("hostport: no block of %d free ports found in 100 tries outside the ephemeral range %d-%d", n, lo, hi)
}

// spans are the ranges [first, last] of the bases of n consecutive ports between lowest and
// 65535 that stay outside the ephemeral range lo-hi.
func spans(lo, hi, n int) [][2]int {
	var out [][2]int
	if last := min(lo-1, 65535) - n + 1; last >= lowest {
		out = append(out, [2]int{lowest, last})
	}
	if first, last := max(hi+1, lowest), 65535-n+1; first <= last {
		out = append(out, [2]int{first, last})
	}
	return out
}

// ephemeral reads the kernel's ephemeral port range; Linux's default when it cannot.
func ephemeral() (lo, hi int) {
	lo, hi = 32768, 60999
	b, err := os.ReadFile(rangeFile)
	if err != nil {
		return lo, hi
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return lo, hi
	}
	l, err1 := strconv.Atoi(f[0])
	h, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || l > h {
		return lo, hi
	}
	return l, h
}

// free reports whether ports base..base+n-1 can all be bound, TCP and UDP, on every address
// (":port" is the IPv6 wildcard, dual-stack, so an IPv4 or IPv6 listener anywhere conflicts).
func free(base, n int) bool {
	var held []io.Closer
	defer func() {
		for _, c := range held {
			_ = c.Close()
		}
	}()
	for p := base; p < base+n; p++ {
		addr := ":" + strconv.Itoa(p)
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return false
		}
		held = append(held, l)
		u, err := net.ListenPacket("udp", addr)
		if err != nil {
			return false
		}
		held = append(held, u)
	}
	return true
}
