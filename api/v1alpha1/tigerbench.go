package v1alpha1

import (
	"encoding/json"
	"time"
)

// TigerBenchTest is one test of a tiger-bench testconfig.yaml as cnperf ran it: the test as
// written (tiger-bench's "config" object) and what cnperf measured beyond the cases of its
// group (thruput-latency and iperf tests are ordinary Results whose Group is Group).
type TigerBenchTest struct {
	// Index is the test's position in the file, from 0.
	Index int `json:"index"`
	// Kind is tiger-bench's testKind: thruput-latency, iperf, ttfr or dnsperf.
	Kind string `json:"kind"`
	// Group is the Group of this test's Results.
	Group string `json:"group"`
	// Config is the test as tiger-bench writes it in results.json ("config"), defaults applied.
	Config    json.RawMessage `json:"config"`
	StartTime time.Time       `json:"startTime"`
	EndTime   time.Time       `json:"endTime,omitempty"`
	// Standing is the standing config in place during the test.
	Standing *StandingConfig `json:"standing,omitempty"`
	// Calico is the Calico reconfiguration in force during the test, when the test asked for one.
	Calico *CalicoChange `json:"calico,omitempty"`
	TTFR   *TTFRResult   `json:"ttfr,omitempty"`
	DNS    *DNSResult    `json:"dns,omitempty"`
	// Error is why the test (or a part of it) failed; its cases carry their own errors.
	Error    string   `json:"error,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// Failed reports whether the test itself failed (its cases are judged on their own).
func (t *TigerBenchTest) Failed() bool {
	if t.Error != "" {
		return true
	}
	if t.Standing != nil && t.Standing.Error != "" {
		return true
	}
	if t.TTFR != nil && (t.TTFR.Failures > 0 || t.TTFR.Datapoints == 0) {
		return true
	}
	if t.DNS != nil && (t.DNS.LookupFailures > 0 || t.DNS.ConnectFailures > 0 || t.DNS.Lookups == 0) {
		return true
	}
	return false
}

// StandingConfig is load that stands in a cluster while tests run: pods, Services backed by a
// deployment, and NetworkPolicies (active ones selecting the namespace's pods, idle ones
// selecting none), as tiger-bench's numPods, numServices, numPolicies and numIdlePolicies.
type StandingConfig struct {
	Namespace string `json:"namespace"`
	// Wanted counts.
	Pods            int `json:"pods"`
	Services        int `json:"services"`
	ServiceBackends int `json:"serviceBackends"`
	Policies        int `json:"policies"`
	IdlePolicies    int `json:"idlePolicies"`
	// Nodes are the nodes the standing pods were placed on.
	Nodes []string `json:"nodes,omitempty"`
	// ObjectsApplied and ObjectsDeleted count API writes made to reach the wanted counts
	// (objects already in place are applied again, which the API server treats as a no-op).
	ObjectsApplied int `json:"objectsApplied"`
	ObjectsDeleted int `json:"objectsDeleted"`
	// ApplySeconds is the time the API writes took; ReadySeconds the time until every standing
	// pod was ready as well (from the first write).
	ApplySeconds float64 `json:"applySeconds"`
	ReadySeconds float64 `json:"readySeconds"`
	// ObjectsPerSecond is ObjectsApplied / ApplySeconds; PodsPerSecond is the standing pods
	// over ReadySeconds.
	ObjectsPerSecond float64 `json:"objectsPerSecond"`
	PodsPerSecond    float64 `json:"podsPerSecond,omitempty"`
	Parallelism      int     `json:"parallelism"`
	// Kept is true when the standing config was left in place after the test.
	Kept          bool    `json:"kept"`
	RemoveSeconds float64 `json:"removeSeconds,omitempty"`
	Error         string  `json:"error,omitempty"`
}

// Distribution summarises a set of values (unit in the field that holds it). Percentiles use
// the nearest-rank method, as tiger-bench does.
type Distribution struct {
	N    int     `json:"n"`
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P75  float64 `json:"p75"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
}

// Count is how often something happened, e.g. one failure reason.
type Count struct {
	What  string `json:"what"`
	Count int    `json:"count"`
}

// TTFRResult is a time-to-first-response test: client pods created at a rate, each measuring
// from its own process start to the first successful response of a server on its node.
type TTFRResult struct {
	Nodes                   []string      `json:"nodes"`
	RequestedPodsPerSecond  float64       `json:"requestedPodsPerSecond"`
	AchievedPodsPerSecond   float64       `json:"achievedPodsPerSecond"`
	PodsPerNode             int           `json:"podsPerNode"`
	DurationSeconds         float64       `json:"durationSeconds"`
	PodsCreated             int           `json:"podsCreated"`
	Datapoints              int           `json:"datapoints"`
	Failures                int           `json:"failures"`
	FailureReasons          []Count       `json:"failureReasons,omitempty"`
	HostNetwork             bool          `json:"hostNetwork,omitempty"`
	TTFRSeconds             *Distribution `json:"ttfrSeconds,omitempty"`
	PodCreateToReadySeconds *Distribution `json:"podCreateToReadySeconds,omitempty"`
	// Values are the successful datapoints in seconds, in the order the pods were created.
	Values   []float64 `json:"valuesSeconds,omitempty"`
	Warnings []string  `json:"warnings,omitempty"`
}

// DNSResult is a DNS latency test: pods resolve a name and connect to what it resolves to.
type DNSResult struct {
	Target string `json:"target"`
	Port   int    `json:"port"`
	Pods   int    `json:"pods"`
	// Lookups and Connects count attempts; the failures are included in them.
	Lookups         int           `json:"lookups"`
	LookupFailures  int           `json:"lookupFailures"`
	Connects        int           `json:"connects"`
	ConnectFailures int           `json:"connectFailures"`
	LookupSeconds   *Distribution `json:"lookupSeconds,omitempty"`
	ConnectSeconds  *Distribution `json:"connectSeconds,omitempty"`
	FailureReasons  []Count       `json:"failureReasons,omitempty"`
	// DuplicateSYN is set only when it was captured; cnperf's agent does not capture packets.
	DuplicateSYN *int     `json:"duplicateSYN,omitempty"`
	Warnings     []string `json:"warnings,omitempty"`
}

// CalicoChange is a Calico reconfiguration made for a test and undone afterwards.
type CalicoChange struct {
	Encap              string `json:"encap,omitempty"`
	Dataplane          string `json:"dataplane,omitempty"`
	CalicoNodeCPULimit string `json:"calicoNodeCPULimit,omitempty"`
	// Previous are the settings found before the run, restored at its end.
	PreviousEncap              string `json:"previousEncap,omitempty"`
	PreviousDataplane          string `json:"previousDataplane,omitempty"`
	PreviousCalicoNodeCPULimit string `json:"previousCalicoNodeCPULimit,omitempty"`
	// Changes lists the objects written, e.g. "IPPool default-ipv4-ippool: vxlanMode Never -> Always".
	Changes []string `json:"changes,omitempty"`
	Error   string   `json:"error,omitempty"`
}
