package v1alpha1

// PathMTU is what the path-MTU check (`cnperf run --check-mtu`) found on one path, before the
// path was measured: in each direction, the largest IP packet with don't-fragment set that got
// through, against the MTU of the sender's own interface.
type PathMTU struct {
	Path Path `json:"path"`
	// Topology is the lab datapath the path was checked on (local platform only).
	Topology *Topology `json:"topology,omitempty"`
	// Forward is client → server, Reverse server → client.
	Forward PathMTUProbe `json:"forward"`
	Reverse PathMTUProbe `json:"reverse"`
	// Finding names a mismatch ("black hole", "needs path-MTU discovery"), "" when the path
	// carries full-size packets both ways or could not be probed (see the probes' errors).
	Finding string `json:"finding,omitempty"`
	// Consequence says what the mismatch does to traffic, in one sentence.
	Consequence string `json:"consequence,omitempty"`
}

// PathMTUProbe is one direction of a path-MTU check, as `cnperf agent mtu` measured it with
// ICMP echo requests that have don't-fragment set. Sizes are whole IP packets (headers
// included), as an MTU is.
type PathMTUProbe struct {
	// From and To are the sender's and the echoing peer's addresses.
	From string `json:"from,omitempty"`
	To   string `json:"to"`
	// InterfaceMTUBytes is the MTU of the sender's interface that holds From (the pod's eth0,
	// or the node's interface for a host-network end); an IPv4 packet stops at 65535 bytes, so
	// loopback's 65536 reads 65535.
	InterfaceMTUBytes int `json:"interfaceMTUBytes,omitempty"`
	// LargestBytes is the largest packet that was answered; 0 when none was.
	LargestBytes int `json:"largestBytes,omitempty"`
	// TooBigMTUBytes is the MTU an ICMP "fragmentation needed" (IPv6: "packet too big")
	// announced during the probe, 0 when none came back.
	TooBigMTUBytes int `json:"tooBigMTUBytes,omitempty"`
	// SilentDropBytes is the smallest size that was neither answered nor refused with an ICMP
	// error (seen on a raw socket only): packets that vanish, a black hole.
	SilentDropBytes int `json:"silentDropBytes,omitempty"`
	// Probes is how many echo requests were sent.
	Probes int `json:"probes,omitempty"`
	// Error says why the direction could not be probed (nothing answered, no permission).
	Error string `json:"error,omitempty"`
}
