package figure

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// Workload is the part of a case that defines the traffic itself, independent of the tool
// measuring it and of how long or how often it is measured: profile, path and the traffic
// parameters (message and response size, parallel flows, burst, rate, host network, service,
// IP family, secondary network, driver options). Duration, samples, warm-up and timeout are not part of it.
func Workload(r *api.Result) string {
	p := r.Params
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%s|msg=%d|resp=%d|par=%d|burst=%d|rate=%s|hostnet=%t|svc=%t|ip=%s",
		r.Profile, r.Path, p.MessageSizeBytes, p.ResponseSizeBytes, p.Parallel, p.Burst,
		strconv.FormatFloat(p.RateBitsPerSecond, 'g', -1, 64), p.HostNetwork, p.Service, ipFamily(p.IPFamily))
	if p.Network != "" { // only when set, so the keys of every other case stay as they were
		fmt.Fprintf(&b, "|net=%s", p.Network)
	}
	keys := make([]string, 0, len(p.Options))
	for k := range p.Options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "|opt:%s=%s", k, p.Options[k])
	}
	return b.String()
}

func ipFamily(f string) string {
	if f == "" {
		return "ipv4"
	}
	return f
}

// CaseKey identifies a case across runs: the workload and the driver. Compare matches on it.
func CaseKey(r *api.Result) string { return r.Driver + "|" + Workload(r) }

// TopologyKey adds the local datapath topology to a key, for grouping within one run.
func TopologyKey(r *api.Result) string {
	if r.Topology == nil {
		return ""
	}
	t := r.Topology
	return fmt.Sprintf("|topo=%s/%d/%d/%s/%d", t.Flavour, t.MTUBytes, t.PolicyRules, t.PolicyStyle, t.Backends)
}

// TopologyLabel is a short human name of a topology for tables and progress lines:
// "vxlan mtu1450", "bridge mtu1500 1000 rules (chains)", "nftables mtu1500 2 backends".
func TopologyLabel(t *api.Topology) string {
	if t == nil {
		return ""
	}
	parts := []string{t.Flavour}
	if t.MTUBytes > 0 {
		parts = append(parts, "mtu"+strconv.Itoa(t.MTUBytes))
	}
	if t.PolicyRules > 0 {
		parts = append(parts, fmt.Sprintf("%d rules (%s)", t.PolicyRules, t.PolicyStyle))
	}
	if t.Backends > 0 {
		b := "backends"
		if t.Backends == 1 {
			b = "backend"
		}
		parts = append(parts, fmt.Sprintf("%d %s", t.Backends, b))
	}
	return strings.Join(parts, " ")
}

// CaseLabel is a short human label: "TCP_STREAM native loopback 1024B x1".
func CaseLabel(r *api.Result) string {
	p := r.Params
	if r.Profile.IsProgramming() {
		// one change seen from one client node (under some standing policies): no sizes or flows
		s := fmt.Sprintf("%s %s %s", r.Profile, r.Driver, r.Path)
		if n := p.Options["node"]; n != "" {
			s += " from " + n
		}
		if n := p.Options["standingPolicies"]; n != "" {
			s += " with " + n + " policies"
		}
		return s
	}
	s := fmt.Sprintf("%s %s %s %s x%d", r.Profile, r.Driver, r.Path, Bytes(p.MessageSizeBytes), p.Parallel)
	if p.ResponseSizeBytes > 0 && p.ResponseSizeBytes != p.MessageSizeBytes {
		s += "/" + Bytes(p.ResponseSizeBytes)
	}
	if p.Burst > 0 {
		s += fmt.Sprintf(" burst %d", p.Burst)
	}
	if p.RateBitsPerSecond > 0 {
		s += " @" + BitsPerSecond.Format(p.RateBitsPerSecond)
	}
	if p.HostNetwork {
		s += " hostNetwork"
	}
	if p.Service {
		s += " service"
	}
	if p.IPFamily != "" && p.IPFamily != "ipv4" {
		s += " " + p.IPFamily
	}
	if p.Network != "" {
		s += " net " + p.Network + AttachmentLabel(r)
	}
	if r.Topology != nil && r.Topology.Flavour != "" {
		s += " [" + r.Topology.Flavour + "]"
	}
	return s
}

// WorkloadLabel is CaseLabel without the topology: compare matches cases across topologies
// (the topology is what the columns differ in), so its labels leave it out.
func WorkloadLabel(r *api.Result) string {
	c := *r
	c.Topology = nil
	return CaseLabel(&c)
}

// Bytes prints a message size: 64B, 1KiB, 1500B, 64KiB.
func Bytes(n int) string {
	switch {
	case n <= 0:
		return "default"
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + "MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.Itoa(n>>10) + "KiB"
	}
	return strconv.Itoa(n) + "B"
}

// FailureCause is the first error a result carries: the case's own, or its first failed sample's.
// When the case's error is a generic one ("every sample failed"), the first sample's cause is
// appended.
func FailureCause(r *api.Result) string {
	var first string
	for _, s := range r.Samples {
		if !s.Warmup && s.Error != "" {
			first = s.Error
			break
		}
	}
	switch {
	case r.Error == "":
		return first
	case first == "" || strings.Contains(r.Error, first):
		return r.Error
	}
	return r.Error + ": " + first
}

// FailureSummary says in a phrase why a failed result failed: its own error, or how many of its
// samples failed ("1 of 3 samples failed"); FailureCause is the samples' first cause.
func FailureSummary(r *api.Result) string {
	if r.Error != "" {
		return r.Error
	}
	return fmt.Sprintf("%d of %d samples failed", r.Summary.SamplesFailed, r.Summary.SamplesTotal)
}

// AttachmentLabel is what a case's secondary network was, " (bridge mtu1500)", from its
// placement; "" when the result does not say.
func AttachmentLabel(r *api.Result) string {
	if r.Placement == nil || r.Placement.Attachment == nil {
		return ""
	}
	a := r.Placement.Attachment
	var parts []string
	if a.Type != "" {
		parts = append(parts, a.Type)
	}
	if a.MTUBytes > 0 {
		parts = append(parts, "mtu"+strconv.Itoa(a.MTUBytes))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, " ") + ")"
}

// AttachmentNote names a secondary network for a reader, with what its result says of it:
// "on secondary network multus-e2e/e2e-bridge (CNI plugin bridge, MTU 1500)" (a is nil, or
// says less, when the result does not).
func AttachmentNote(network string, a *api.Attachment) string {
	var what []string
	note := "on secondary network " + network
	if a != nil && a.Mode != nil { // made by one of k8s-netperf's modes: named by its flag
		what = append(what, a.Mode.Flag)
		if a.Mode.Primary {
			note = "on primary network " + network
		}
	}
	if a != nil && a.Type != "" {
		what = append(what, "CNI plugin "+a.Type)
	}
	if a != nil && a.MTUBytes > 0 {
		what = append(what, "MTU "+strconv.Itoa(a.MTUBytes))
	}
	if len(what) > 0 {
		note += " (" + strings.Join(what, ", ") + ")"
	}
	return note
}

// PoliciesNotAppliedNote says that the NetworkPolicies pols (NAMESPACE/NAME) were asked for but
// do not filter a secondary network's traffic: "NetworkPolicy ns/deny selects the measured pods
// but does not apply on a secondary network (...): the FIGURES are unfiltered".
func PoliciesNotAppliedNote(pols []string, figures string) string {
	return fmt.Sprintf("NetworkPolicy %s selects the measured pods but does not apply on a secondary network "+
		"(NetworkPolicy covers the cluster's own network): the %s are unfiltered", strings.Join(pols, ", "), figures)
}
