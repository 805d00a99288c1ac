package v1alpha1

// The profiles of `cnperf programming`: how long the network takes to obey a change of the
// cluster's configuration, seen from client pods. They are not in Profiles (no driver runs
// them, plans and --profile do not take them); results carry them with Driver "probe".
const (
	// ServiceCreate: a ClusterIP Service is created; the time until its ClusterIP answers.
	ServiceCreate Profile = "SERVICE_CREATE"
	// ServiceDelete: the Service is deleted; the time until its ClusterIP stops answering.
	ServiceDelete Profile = "SERVICE_DELETE"
	// EndpointAdd: a ready pod joins a Service that had no endpoint; the time until the
	// ClusterIP answers.
	EndpointAdd Profile = "ENDPOINT_ADD"
	// EndpointRemove: the Service's only endpoint leaves it; the time until the ClusterIP
	// stops answering.
	EndpointRemove Profile = "ENDPOINT_REMOVE"
	// PolicyDeny: a NetworkPolicy isolating the server (no ingress allowed) is created; the
	// time until connects to the server's pod IP fail.
	PolicyDeny Profile = "POLICY_DENY"
	// PolicyAllow: under a default-deny policy, a NetworkPolicy allowing the clients is
	// created; the time until connects to the server's pod IP complete.
	PolicyAllow Profile = "POLICY_ALLOW"
	// PodCreate: a pod is created; the time from the create call's return until its IP
	// answers the clients (its server listening, the network routing to it).
	PodCreate Profile = "POD_CREATE"
	// PodReady: the same pod turns Ready; the time from cnperf seeing it Ready until its IP
	// answers the clients (0 when it answered before: the sample's note says by how much).
	PodReady Profile = "POD_READY"
)

// ProgrammingProfiles lists the programming profiles in a stable order.
var ProgrammingProfiles = []Profile{ServiceCreate, ServiceDelete, EndpointAdd, EndpointRemove, PolicyDeny, PolicyAllow, PodCreate, PodReady}

// IsProgramming reports whether p is one of `cnperf programming`'s profiles.
func (p Profile) IsProgramming() bool {
	for _, q := range ProgrammingProfiles {
		if p == q {
			return true
		}
	}
	return false
}

// ProgrammingDriver is the Driver of programming results: cnperf's own probe (`cnperf agent
// probe`).
const ProgrammingDriver = "probe"

// Programming is what a programming result (one change, seen from one client node) says
// beyond its samples: how it was measured and what bounds the error. Each sample is one change
// (Sample.ProgrammingSeconds); the figure is the time from the moment the API call that made
// the change returned (on cnperf's clock) to the start of the first connect attempt that
// showed the new state, confirmed by the attempts after it (on the client node's clock,
// corrected by the measured offset).
type Programming struct {
	// Change says what was changed, e.g. "create Service (ClusterIP)".
	Change string `json:"change"`
	// Expect is the state the clients waited for: "open" or "closed".
	Expect string `json:"expect"`
	// Target is what the clients connected to (ClusterIP:port or pod IP:port).
	Target string `json:"target,omitempty"`
	// StandingPolicies is how many NetworkPolicies stood in the namespace during the changes.
	StandingPolicies int `json:"standingPolicies"`
	// ProbeIntervalSeconds is the time between two connect attempts' starts: the change lies
	// between the last attempt in the old state and the first in the new, so a figure is late
	// by up to about one interval.
	ProbeIntervalSeconds  float64 `json:"probeIntervalSeconds"`
	AttemptTimeoutSeconds float64 `json:"attemptTimeoutSeconds"`
	// Confirm is how many attempts after the first one in the new state had to show it too.
	Confirm int `json:"confirm"`
	// MeasuredOffsetLowSeconds and MeasuredOffsetHighSeconds bound the client node's clock
	// minus cnperf's, measured NTP-style: the node read its clock inside the exec with the least
	// round trip, so the offset lies between its reading minus the trip's end and its reading
	// minus the trip's start.
	MeasuredOffsetLowSeconds  float64 `json:"measuredOffsetLowSeconds"`
	MeasuredOffsetHighSeconds float64 `json:"measuredOffsetHighSeconds"`
	// ClockOffsetSeconds is the offset applied to the node's times: 0 when the node shares
	// cnperf's clock (SharedClock) or when the measured bounds hold 0 (the clocks agree as far
	// as an exec can tell, as synchronised clocks do), else the middle of the bounds.
	// ClockUncertaintySeconds bounds its error: 0 for a shared clock, else the farther
	// measured bound's distance from it.
	ClockOffsetSeconds      float64 `json:"clockOffsetSeconds"`
	ClockUncertaintySeconds float64 `json:"clockUncertaintySeconds"`
	// SharedClock is set when the client node runs on cnperf's own kernel (same boot id):
	// one clock, the true offset is zero.
	SharedClock bool `json:"sharedClock,omitempty"`
	// ErrorBoundSeconds is what bounds each figure's error: the probe interval plus the clock
	// uncertainty.
	ErrorBoundSeconds float64 `json:"errorBoundSeconds"`
	// Percentiles are p50, p90, p99 and the maximum of the successful changes with
	// distribution-free confidence intervals (order statistics).
	Percentiles []Percentile `json:"percentiles,omitempty"`
	// Component is the figure the component reported about itself over the same window, when
	// cnperf could read it.
	Component *ComponentFigure `json:"component,omitempty"`
	// ProbeFloor is the method's own floor, measured once per run: what a change with no
	// latency gets (every result of the run carries the same).
	ProbeFloor *ProbeFloor `json:"probeFloor,omitempty"`
}

// ProbeFloor is the probe's own floor: the figures of changes with no latency at all, made at
// known moments and probed as the clients probe (a change the network makes at once still
// shows a figure up to about one probe interval, not zero).
type ProbeFloor struct {
	// Where says where and how it was measured.
	Where string `json:"where"`
	// Changes is how many were measured; MeanSeconds their mean figure.
	Changes     int     `json:"changes"`
	MeanSeconds float64 `json:"meanSeconds"`
	// Percentiles are p50, p90, p99 and the maximum, as the results' own.
	Percentiles []Percentile `json:"percentiles,omitempty"`
	// Error says why fewer than the run's count were measured.
	Error string `json:"error,omitempty"`
}

// Percentile is one quantile of a set of values with its confidence interval; a bound the
// values cannot give (too few of them for that quantile) is absent.
type Percentile struct {
	// Quantile is in [0, 1]: 0.5 is the median, 1 the maximum.
	Quantile float64  `json:"quantile"`
	Seconds  float64  `json:"seconds"`
	Level    float64  `json:"level,omitempty"` // the interval's confidence level in percent (95)
	CILow    *float64 `json:"ci95LowSeconds,omitempty"`
	CIHigh   *float64 `json:"ci95HighSeconds,omitempty"`
}

// ComponentFigure is a latency a component (kube-proxy, Felix) reports about itself.
type ComponentFigure struct {
	// Metric is the metric read, e.g. "kubeproxy_network_programming_duration_seconds".
	Metric string `json:"metric"`
	// Source is where it was read (a pod or endpoint).
	Source string `json:"source,omitempty"`
	// Count is how many observations fell in the window; MeanSeconds their mean.
	Count       float64 `json:"count"`
	MeanSeconds float64 `json:"meanSeconds"`
	Note        string  `json:"note,omitempty"`
}
