// Package pathmtu finds the path MTU between two endpoints and says what a mismatch does.
//
// The agent side (`cnperf agent mtu`, Probe) sends ICMP echo requests with don't-fragment set
// (IP_PMTUDISC_PROBE: the kernel neither fragments them nor caps them at a path MTU it has
// learned) and searches for the largest one that is answered, from the sender's interface MTU
// down. An ICMP "fragmentation needed" / "packet too big" seen during the search is recorded:
// it is what makes path-MTU discovery work. The run side (Check) runs the probe at both ends
// of a path, client → server and server → client, and Assess turns the two directions into a
// finding: none when full-size packets pass both ways, a black hole when larger packets vanish
// without an ICMP error, or a path that needs path-MTU discovery when the ICMP error comes back.
package pathmtu

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// Header sizes: an echo request of n bytes on the wire carries n - ipHeader - icmpHeader bytes
// of payload.
const (
	ipv4Header = 20
	ipv6Header = 40
	icmpHeader = 8
)

// Smallest packets every path must carry: IPv4's minimum MTU (RFC 791) and IPv6's (RFC 8200).
const (
	MinIPv4Bytes = 68
	MinIPv6Bytes = 1280
)

// Options configure one probe.
type Options struct {
	// Target is the address that answers the echo requests.
	Target netip.Addr
	// MaxBytes caps the search; 0 starts at the sender's interface MTU.
	MaxBytes int
	// Attempts is how many echo requests of one size may go unanswered before the size is
	// taken as not passing (one lost packet must not read as a small MTU).
	Attempts int
	// Timeout is how long one echo request waits for its reply.
	Timeout time.Duration
}

// DefaultOptions are the agent's defaults.
func DefaultOptions() Options { return Options{Attempts: 3, Timeout: 300 * time.Millisecond} }

// Validate checks the options.
func (o Options) Validate() error {
	switch {
	case !o.Target.IsValid():
		return errors.New("a target address is required")
	case o.Attempts < 1 || o.Attempts > 20:
		return fmt.Errorf("attempts %d: must be between 1 and 20", o.Attempts)
	case o.Timeout <= 0 || o.Timeout > 30*time.Second:
		return fmt.Errorf("timeout %s: must be positive and at most 30s", o.Timeout)
	case o.MaxBytes != 0 && (o.MaxBytes < minBytes(o.Target) || o.MaxBytes > 65535):
		return fmt.Errorf("max bytes %d: must be between %d and 65535", o.MaxBytes, minBytes(o.Target))
	}
	return nil
}

func minBytes(a netip.Addr) int {
	if a.Is4() || a.Is4In6() {
		return MinIPv4Bytes
	}
	return MinIPv6Bytes
}

// echoer sends one echo request of size bytes (whole IP packet) and waits up to the timeout
// for its reply. It reports whether the reply came, and the MTU of a "too big" ICMP error about
// the request (0 when none came).
type echoer interface {
	echo(ctx context.Context, size int, timeout time.Duration) (answered bool, tooBigMTU int, err error)
}

// search finds the largest size in [lo, hi] that is answered, on the assumption that every
// size up to the path MTU is answered and none above it. It tries hi first (a healthy path
// costs one round trip); then the MTU a "too big" error announced, which ends the search
// when it is answered; then lo (nothing answered at all is an error, not an MTU); then
// bisects, trying an announced MTU inside the open interval instead of the midpoint.
//
// seesErrors says whether e sees the ICMP errors (a raw socket): then a size that is neither
// answered nor refused with one is recorded as dropped silently.
func search(ctx context.Context, e echoer, lo, hi, attempts int, timeout time.Duration, seesErrors bool, p *api.PathMTUProbe) error {
	try := func(size int) (bool, error) {
		refused := false
		defer func() {
			if !refused && seesErrors && (p.SilentDropBytes == 0 || size < p.SilentDropBytes) {
				p.SilentDropBytes = size
			}
		}()
		for range attempts {
			if err := ctx.Err(); err != nil {
				refused = true // not known
				return false, err
			}
			p.Probes++
			ok, tooBig, err := e.echo(ctx, size, timeout)
			if err != nil {
				refused = true
				return false, err
			}
			if tooBig > 0 && (p.TooBigMTUBytes == 0 || tooBig < p.TooBigMTUBytes) {
				p.TooBigMTUBytes = tooBig
			}
			if ok {
				refused = true // not dropped
				return true, nil
			}
			if tooBig > 0 && tooBig < size {
				refused = true
				return false, nil // the path said why; asking again gets the same answer
			}
		}
		return false, nil
	}
	if lo > hi {
		return fmt.Errorf("nothing to search: smallest size %d bytes above largest %d", lo, hi)
	}
	// answer tries a size that is the answer when it is answered: the largest, then the MTU
	// the path announced.
	answer := func(size int) (bool, error) {
		ok, err := try(size)
		if ok && err == nil {
			p.LargestBytes = size
		}
		return ok, err
	}
	if ok, err := answer(hi); ok || err != nil {
		return err
	}
	bad := hi
	if m := p.TooBigMTUBytes; m >= lo && m < hi {
		if ok, err := answer(m); ok || err != nil {
			return err
		}
		bad = m
	}
	if lo == bad {
		return fmt.Errorf("no echo reply from %s to %d %d-byte requests: ICMP echo blocked, or the peer unreachable", p.To, attempts, lo)
	}
	ok, err := try(lo)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("no echo reply from %s to %d-byte or %d-byte requests (%d each): ICMP echo blocked, or the peer unreachable",
			p.To, lo, bad, attempts)
	}
	good := lo
	for bad-good > 1 {
		mid := good + (bad-good)/2
		if m := p.TooBigMTUBytes; m > good && m < bad {
			mid = m
		}
		ok, err := try(mid)
		if err != nil {
			return err
		}
		if ok {
			good = mid
		} else {
			bad = mid
		}
	}
	p.LargestBytes = good
	return nil
}

// Finding names, as Assess returns them.
const (
	FindingBlackHole = "black hole"
	FindingPMTUD     = "needs path-MTU discovery"
)

// Assess compares what each direction carried with the sender's interface MTU and returns the
// finding and its consequence, or "", "" when every probed direction carries full-size packets
// (a direction that could not be probed is no finding: its error says why).
func Assess(fwd, rev api.PathMTUProbe) (finding, consequence string) {
	type short struct {
		dir string
		p   api.PathMTUProbe
	}
	var hole, frag []short
	for _, d := range []short{{"client → server", fwd}, {"server → client", rev}} {
		p := d.p
		if p.Error != "" || p.LargestBytes == 0 || p.InterfaceMTUBytes == 0 || p.LargestBytes >= p.InterfaceMTUBytes {
			continue
		}
		if p.TooBigMTUBytes > 0 && p.SilentDropBytes == 0 {
			frag = append(frag, d)
		} else {
			hole = append(hole, d)
		}
	}
	// describe says which packets: "packets above 1400 bytes (interface MTU 1500), both ways"
	describe := func(ds []short) (string, int) {
		if len(ds) == 2 && ds[0].p.LargestBytes == ds[1].p.LargestBytes && ds[0].p.InterfaceMTUBytes == ds[1].p.InterfaceMTUBytes {
			return fmt.Sprintf("packets above %d bytes (interface MTU %d), both ways,", ds[0].p.LargestBytes, ds[0].p.InterfaceMTUBytes),
				ds[0].p.LargestBytes
		}
		s, least := "", 0
		for i, d := range ds {
			if i > 0 {
				s += " and "
			}
			s += fmt.Sprintf("%s packets above %d bytes (interface MTU %d)", d.dir, d.p.LargestBytes, d.p.InterfaceMTUBytes)
			if least == 0 || d.p.LargestBytes < least {
				least = d.p.LargestBytes
			}
		}
		return s, least
	}
	switch {
	case len(hole) > 0:
		what, mtu := describe(hole)
		return FindingBlackHole, fmt.Sprintf("%s are dropped silently: no ICMP \"fragmentation needed\" comes back, so TCP "+
			"stalls on full-size segments (unless MSS is clamped) and large UDP datagrams are lost; lower the pod MTU to %d "+
			"or let that ICMP through", what, mtu)
	case len(frag) > 0:
		what, mtu := describe(frag)
		return FindingPMTUD, fmt.Sprintf("%s do not fit: an ICMP \"fragmentation needed\" comes back, so TCP shrinks its "+
			"segments after a first loss and UDP datagrams above %d bytes are fragmented (dropped with don't-fragment); "+
			"the pod MTU is above the path's", what, mtu)
	}
	return "", ""
}
