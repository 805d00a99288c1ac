// Package v1alpha1 holds cnperf's public, versioned types: the plan it reads and the run it
// writes. Values are in base units and every field name carries its unit.
package v1alpha1

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// APIVersion is the apiVersion of every document this package describes.
const APIVersion = "cnperf.dev/v1alpha1"

// Kinds of documents.
const (
	KindPlan = "Plan"
	KindRun  = "Run"
)

// Profile is the traffic pattern, named as netperf names it.
type Profile string

// The profiles cnperf knows.
const (
	TCPStream   Profile = "TCP_STREAM"
	TCPSendfile Profile = "TCP_SENDFILE"
	TCPMaerts   Profile = "TCP_MAERTS"
	UDPStream   Profile = "UDP_STREAM"
	TCPRR       Profile = "TCP_RR"
	UDPRR       Profile = "UDP_RR"
	TCPCRR      Profile = "TCP_CRR"
	// TCPStreamLat is k8s-netperf's latency under load: a TCP stream saturates the path while
	// small messages go back and forth, and their round-trip latency is the figure to watch
	// (bufferbloat, qdiscs, CNI queues); the stream's throughput is its headline figure.
	TCPStreamLat Profile = "TCP_STREAM_LAT"
)

// Profiles lists every profile in a stable order.
var Profiles = []Profile{TCPStream, TCPSendfile, TCPMaerts, UDPStream, TCPRR, UDPRR, TCPCRR, TCPStreamLat}

// IsStream reports whether the profile measures bulk throughput.
func (p Profile) IsStream() bool {
	return p == TCPStream || p == TCPSendfile || p == TCPMaerts || p == UDPStream || p == TCPStreamLat
}

// IsRR reports whether the profile measures request/response transactions.
func (p Profile) IsRR() bool { return p == TCPRR || p == UDPRR || p == TCPCRR }

// IsUDP reports whether the profile uses UDP.
func (p Profile) IsUDP() bool { return p == UDPStream || p == UDPRR }

// Valid reports whether p is a known profile.
func (p Profile) Valid() bool {
	for _, q := range Profiles {
		if p == q {
			return true
		}
	}
	return false
}

// Params are the knobs of one case. Zero values mean "the driver's default" only where
// the field's comment says so.
type Params struct {
	DurationSeconds   float64 `json:"durationSeconds"`
	WarmupSeconds     float64 `json:"warmupSeconds,omitempty"`
	Samples           int     `json:"samples"`
	MessageSizeBytes  int     `json:"messageSizeBytes"`
	ResponseSizeBytes int     `json:"responseSizeBytes,omitempty"` // RR response size (0 = the message size); TCP_STREAM_LAT: the small messages' size (0 = 1)
	Parallel          int     `json:"parallel"`
	Burst             int     `json:"burst"`                       // extra transactions in flight (netperf -b); 0 = one at a time
	RateBitsPerSecond float64 `json:"rateBitsPerSecond,omitempty"` // UDP/TCP target rate; 0 = unlimited
	HostNetwork       bool    `json:"hostNetwork,omitempty"`
	Service           bool    `json:"service,omitempty"`
	IPFamily          string  `json:"ipFamily,omitempty"` // "ipv4" (default) or "ipv6"
	// Network is the secondary network (a Multus NetworkAttachmentDefinition, NAMESPACE/NAME)
	// both pods of a pod-to-pod path attach to and are measured on; "" the default pod network.
	Network string `json:"network,omitempty"`
	// Options are driver-specific switches recorded verbatim (e.g. "zerocopy": "true", "fullRTT": "true").
	Options map[string]string `json:"options,omitempty"`
	// TimeoutSeconds bounds one sample; 0 lets the runner derive it from the duration.
	TimeoutSeconds float64 `json:"timeoutSeconds,omitempty"`
	// Confidence, when set, makes the case take samples until the confidence interval of its
	// headline figure is within the target; Samples is then the least and MaxSamples the most.
	Confidence *ConfidenceTarget `json:"confidence,omitempty"`
	// MaxSamples is the most samples a case with a Confidence target takes (0 without one).
	MaxSamples int `json:"maxSamples,omitempty"`
	// ExcludeOutliers leaves samples flagged as outliers out of the summary (they stay in
	// samples[], marked excluded).
	ExcludeOutliers bool `json:"excludeOutliers,omitempty"`
}

// ConfidenceTarget is the precision a case must reach: the two-sided confidence interval of
// the mean of its headline figure, at Level percent, within ±HalfWidthPercent of the mean.
type ConfidenceTarget struct {
	// Level is the confidence level in percent, e.g. 95.
	Level float64 `json:"level" yaml:"level"`
	// HalfWidthPercent is the largest half-width of the interval, in percent of the mean.
	HalfWidthPercent float64 `json:"halfWidthPercent" yaml:"halfWidthPercent"`
}

// Endpoint says where one side of a measurement really ran.
type Endpoint struct {
	Role        string `json:"role"` // "client" or "server"
	Node        string `json:"node,omitempty"`
	Zone        string `json:"zone,omitempty"`
	Pod         string `json:"pod,omitempty"`
	Namespace   string `json:"namespace,omitempty"`
	NetNS       string `json:"netns,omitempty"`
	PodIP       string `json:"podIP,omitempty"`
	HostIP      string `json:"hostIP,omitempty"`
	HostNetwork bool   `json:"hostNetwork,omitempty"`
	Address     string `json:"address,omitempty"` // the address the client connected to
	// VM is set when the endpoint is a KubeVirt virtual machine (--vm): Pod is then its
	// virt-launcher pod and PodIP the guest's address on the pod network.
	VM *VM `json:"vm,omitempty"`
}

// VM is a KubeVirt VirtualMachineInstance endpoint as it ran.
type VM struct {
	Name    string `json:"name"`              // the VirtualMachineInstance
	Binding string `json:"binding"`           // its pod-network binding: masquerade, bridge, passt
	VCPUs   int    `json:"vcpus"`             // sockets × cores × threads
	Sockets int    `json:"sockets,omitempty"` // the CPU topology asked for
	Cores   int    `json:"cores,omitempty"`
	Threads int    `json:"threads,omitempty"`
	// Emulated: QEMU's software emulation (TCG, KubeVirt's useEmulation), not KVM: its figures
	// measure the mechanics, not VM performance on hardware.
	Emulated bool `json:"emulated,omitempty"`
}

// Placement records both endpoints of a case.
type Placement struct {
	Client Endpoint `json:"client"`
	Server Endpoint `json:"server"`
	// Target is what the client dialled (pod IP, service IP, node IP:port, external name).
	Target string `json:"target,omitempty"`
	// Attachment is the secondary network the case ran on (nil on the cluster's own networks).
	Attachment *Attachment `json:"attachment,omitempty"`
}

// Attachment is a secondary network as the case's pods got it: the NetworkAttachmentDefinition,
// the CNI plugin its configuration names, and each pod's interface on it (from the pod's
// k8s.v1.cni.cncf.io/network-status annotation, which Multus writes).
type Attachment struct {
	// Network is the NetworkAttachmentDefinition, NAMESPACE/NAME.
	Network string `json:"network"`
	// Type is the CNI plugin of its configuration ("bridge", "macvlan", ...; the first plugin
	// of a configuration list).
	Type string `json:"type,omitempty"`
	// MTUBytes is the attachment interface's MTU: the network status's, else the
	// configuration's "mtu"; 0 when neither says.
	MTUBytes int `json:"mtuBytes,omitempty"`
	// Master is the node interface the attachment is made on, when its configuration names one
	// (macvlan's and ipvlan's "master", e.g. "eth0").
	Master string `json:"master,omitempty"`
	// Interface is the server pod's interface on it (e.g. "net1").
	Interface string `json:"interface,omitempty"`
	// ClientIP and ServerIP are the pods' addresses on it; the client dials ServerIP.
	ClientIP string `json:"clientIP,omitempty"`
	ServerIP string `json:"serverIP,omitempty"`
	// PoliciesNotApplied are the NetworkPolicies (NAMESPACE/NAME) that select the server pod for
	// ingress or the client pod for egress: they were asked for, but NetworkPolicy covers the
	// cluster's own network only, so on this network they do not apply (the traffic measured was
	// not filtered by them).
	PoliciesNotApplied []string `json:"policiesNotApplied,omitempty"`
	// Mode, for a network one of k8s-netperf's network modes made (--udnl2, --udnl3, --cudn,
	// --sriov), says which: the run created the mode's objects and OVN-Kubernetes or the SR-IOV
	// Network Operator made the NetworkAttachmentDefinition Network from them.
	Mode *NetworkMode `json:"mode,omitempty"`
}

// NetworkMode is the k8s-netperf network mode a secondary (or primary) network was made for.
type NetworkMode struct {
	// Flag is the mode as given, e.g. "--udnl2", "--cudn layer2", "--sriov ens1f0".
	Flag string `json:"flag"`
	// Kind is "udn", "cudn" or "sriov".
	Kind string `json:"kind"`
	// Value is the flag's value as given ("layer2" of --cudn layer2, the PF of --sriov); the
	// topology, "layer2" or "layer3", for --udnl2 and --udnl3.
	Value string `json:"value,omitempty"`
	// Objects are the objects the run created for it, KIND [NAMESPACE/]NAME.
	Objects []string `json:"objects,omitempty"`
	// Primary: the network replaced the pods' default network (a primary UserDefinedNetwork);
	// the addresses are OVN-Kubernetes's k8s.ovn.org/pod-networks annotation's.
	Primary bool `json:"primary,omitempty"`
}

// K8sNetperfMacvlanName is the NetworkAttachmentDefinition k8s-netperf's --macvlan MASTER
// creates (pkg/k8s MacvlanNadName), and cnperf's --macvlan too: k8s-netperf's CSV names such a
// case's network in Macvlan Info ("macvlan/MASTER"), any other in Bridge Info.
const K8sNetperfMacvlanName = "macvlan-netperf"

// Topology describes a local-platform datapath (network-namespace lab).
type Topology struct {
	Flavour     string `json:"flavour,omitempty"` // e.g. "routed", "vxlan", "bridge", "nftables", "iptables"
	MTUBytes    int    `json:"mtuBytes,omitempty"`
	PolicyRules int    `json:"policyRules,omitempty"`
	PolicyStyle string `json:"policyStyle,omitempty"` // "chains" or "sets"
	Backends    int    `json:"backends,omitempty"`
}

// CPUUsage is CPU use over a measured window in percent of one CPU (100 = one core busy).
type CPUUsage struct {
	// ProcessPercent is the measuring process's user+system CPU, in percent of one CPU.
	ProcessPercent *float64 `json:"processPercent,omitempty"`
	UserPercent    *float64 `json:"userPercent,omitempty"`
	SystemPercent  *float64 `json:"systemPercent,omitempty"`
	// HostPercent is system-wide busy CPU from /proc/stat, in percent of all CPUs.
	HostPercent *float64 `json:"hostPercent,omitempty"`
	// HostBusyCPUPercent is system-wide busy CPU summed over all CPUs, in percent of one CPU
	// (200 = two CPUs busy), as qperf reports it ("% cpus") without saying how many CPUs exist.
	HostBusyCPUPercent *float64 `json:"hostBusyCPUPercent,omitempty"`
	// ServiceDemandMicrosecondsPerKB / PerTransaction follow netperf's definitions.
	ServiceDemandMicrosecondsPerKB          *float64 `json:"serviceDemandMicrosecondsPerKB,omitempty"`
	ServiceDemandMicrosecondsPerTransaction *float64 `json:"serviceDemandMicrosecondsPerTransaction,omitempty"`
}

// LatencyHistogram is a serialised log-linear latency histogram (see internal/stats/hdr).
// Buckets are sparse [index, count] pairs; merging two histograms adds counts per index.
type LatencyHistogram struct {
	Scheme         string     `json:"scheme"` // "loglinear-ns-v1"
	SubBucketBits  int        `json:"subBucketBits"`
	Count          int64      `json:"count"`
	MinNanoseconds int64      `json:"minNanoseconds"`
	MaxNanoseconds int64      `json:"maxNanoseconds"`
	SumNanoseconds float64    `json:"sumNanoseconds"`
	Buckets        [][2]int64 `json:"buckets"`
}

// Latency is a latency distribution summary in microseconds (round-trip time of one transaction).
type Latency struct {
	Count  *int64   `json:"count,omitempty"`
	Mean   *float64 `json:"mean,omitempty"`
	Min    *float64 `json:"min,omitempty"`
	Max    *float64 `json:"max,omitempty"`
	Stddev *float64 `json:"stddev,omitempty"`
	P50    *float64 `json:"p50,omitempty"`
	P75    *float64 `json:"p75,omitempty"`
	P90    *float64 `json:"p90,omitempty"`
	P99    *float64 `json:"p99,omitempty"`
	P999   *float64 `json:"p999,omitempty"`
	P9999  *float64 `json:"p9999,omitempty"`
	// Method says how the figures were obtained: "histogram" (merged per-transaction data),
	// "tool" (as the tool printed them), "tool-rtt-from-one-way" (tool printed one-way time, doubled),
	// "per-sample-median" (several samples without raw data: the median of each percentile, flagged).
	Method string `json:"method,omitempty"`
	// Provenance says whether the figures were measured ("measured": the tool or cnperf timed
	// the transactions) or computed from the transaction rate ("derived": a mean round trip of
	// parallel flows ÷ rate, which assumes one transaction in flight per flow; never a
	// percentile). Empty in results written before cnperf recorded it.
	Provenance string `json:"provenance,omitempty"`
	Note       string `json:"note,omitempty"`
}

// Latency provenances (Latency.Provenance).
const (
	LatencyMeasured = "measured"
	LatencyDerived  = "derived"
)

// Sample is one measurement of a case. A failed sample has Error set and no figures.
type Sample struct {
	Index     int       `json:"index"`
	Warmup    bool      `json:"warmup,omitempty"`
	StartTime time.Time `json:"startTime"`
	EndTime   time.Time `json:"endTime"`
	// DurationSeconds is the measured window as the generator timed it.
	DurationSeconds float64 `json:"durationSeconds,omitempty"`
	Error           string  `json:"error,omitempty"`

	ThroughputBitsPerSecond *float64 `json:"throughputBitsPerSecond,omitempty"`
	PacketsPerSecond        *float64 `json:"packetsPerSecond,omitempty"`
	TransactionsPerSecond   *float64 `json:"transactionsPerSecond,omitempty"`
	ConnectionsPerSecond    *float64 `json:"connectionsPerSecond,omitempty"`
	Retransmits             *float64 `json:"retransmits,omitempty"`
	LossPercent             *float64 `json:"lossPercent,omitempty"`
	JitterMicroseconds      *float64 `json:"jitterMicroseconds,omitempty"`
	// ProgrammingSeconds is a programming profile's figure: the time the network took to
	// obey one change (see Programming).
	ProgrammingSeconds *float64 `json:"programmingSeconds,omitempty"`

	BytesSent       *int64 `json:"bytesSent,omitempty"`
	BytesReceived   *int64 `json:"bytesReceived,omitempty"`
	PacketsSent     *int64 `json:"packetsSent,omitempty"`
	PacketsReceived *int64 `json:"packetsReceived,omitempty"`
	PacketsLost     *int64 `json:"packetsLost,omitempty"`
	Transactions    *int64 `json:"transactions,omitempty"`

	CPU *SampleCPU `json:"cpu,omitempty"`
	// NodeResources is the CPU and memory of the client's and server's nodes over the window.
	NodeResources *NodeResourcesPair `json:"nodeResources,omitempty"`
	Latency       *Latency           `json:"latencyMicroseconds,omitempty"`
	Histogram     *LatencyHistogram  `json:"latencyHistogram,omitempty"`
	// SendCallMicroseconds is how long the client's send calls took during a stream, as the
	// tool timed each call (netperf's histogram on TCP_STREAM and UDP_STREAM; k8s-netperf's
	// "99%tile Observed Latency" of a stream row is its p99). It is not a round trip and never
	// part of Latency. Method "tool", Provenance "measured".
	SendCallMicroseconds *Latency `json:"sendCallMicroseconds,omitempty"`
	// Flows holds per-flow figures when the driver measured flows separately (netperf parallel
	// processes); the sample's own figures are then the correct aggregate (sums for rates).
	Flows []Sample `json:"flows,omitempty"`
	// Raw is the tool's raw output when it is small enough to keep (for audits and re-parsing).
	Raw string `json:"raw,omitempty"`
	// Notes are driver remarks, e.g. "qperf prints one-way latency; doubled to round-trip".
	Notes []string `json:"notes,omitempty"`

	// Intervals are the measured window cut into equal slices, as the client's own counters
	// saw them (native driver), for steady-state checks.
	Intervals []SampleInterval `json:"intervals,omitempty"`
	// SteadyState compares the first interval with the others (set by the runner when the
	// sample has intervals).
	SteadyState *SteadyState `json:"steadyState,omitempty"`
	// Outlier is set when the sample's headline figure is outside median ± 3·MAD of the
	// case's successful samples.
	Outlier bool `json:"outlier,omitempty"`
	// Excluded is set when the sample is left out of the summary (an outlier with
	// params.excludeOutliers).
	Excluded bool `json:"excluded,omitempty"`
}

// SampleInterval is one slice of a sample's measured window. Rates are the client's: bytes it
// sent (TCP_STREAM, TCP_SENDFILE, UDP_STREAM) or received (TCP_MAERTS), transactions or
// connections it completed (RR, CRR).
type SampleInterval struct {
	// StartSeconds is the slice's start from the start of the measured window.
	StartSeconds          float64  `json:"startSeconds"`
	DurationSeconds       float64  `json:"durationSeconds"`
	BitsPerSecond         *float64 `json:"bitsPerSecond,omitempty"`
	TransactionsPerSecond *float64 `json:"transactionsPerSecond,omitempty"`
}

// SteadyState compares a sample's first interval with its other intervals.
type SteadyState struct {
	// FirstIntervalPercent is how far the first interval's rate is from the median of the
	// others, in percent of it (negative: slower).
	FirstIntervalPercent float64 `json:"firstIntervalPercent"`
	// NoisePercent is 3 scaled MADs of the other intervals in percent of their median.
	NoisePercent float64 `json:"noisePercent"`
	// RampUp is true when the first interval differs from the others by more than the noise
	// (and by more than 2 %): the sample was not in a steady state from its start.
	RampUp bool `json:"rampUp,omitempty"`
}

// SampleCPU is the CPU of both sides over one sample's window.
type SampleCPU struct {
	Client *CPUUsage `json:"client,omitempty"`
	Server *CPUUsage `json:"server,omitempty"`
}

// Stat summarises one metric over the successful samples.
type Stat struct {
	N        int     `json:"n"`
	Mean     float64 `json:"mean"`
	Median   float64 `json:"median"`
	Stddev   float64 `json:"stddev"`
	CoV      float64 `json:"cov"`
	Min      float64 `json:"min"`
	Max      float64 `json:"max"`
	CI95Low  float64 `json:"ci95Low"`
	CI95High float64 `json:"ci95High"`
}

// CPUSummary summarises process CPU of both sides.
type CPUSummary struct {
	Client *Stat `json:"client,omitempty"`
	Server *Stat `json:"server,omitempty"`
}

// Summary summarises a case over its successful samples.
type Summary struct {
	SamplesTotal  int `json:"samplesTotal"`
	SamplesFailed int `json:"samplesFailed"`
	// SamplesExcluded counts successful samples left out of the figures (excludeOutliers).
	SamplesExcluded int `json:"samplesExcluded,omitempty"`

	ThroughputBitsPerSecond *Stat       `json:"throughputBitsPerSecond,omitempty"`
	PacketsPerSecond        *Stat       `json:"packetsPerSecond,omitempty"`
	TransactionsPerSecond   *Stat       `json:"transactionsPerSecond,omitempty"`
	ConnectionsPerSecond    *Stat       `json:"connectionsPerSecond,omitempty"`
	Retransmits             *Stat       `json:"retransmits,omitempty"`
	LossPercent             *Stat       `json:"lossPercent,omitempty"`
	JitterMicroseconds      *Stat       `json:"jitterMicroseconds,omitempty"`
	ProgrammingSeconds      *Stat       `json:"programmingSeconds,omitempty"`
	CPUPercent              *CPUSummary `json:"cpuPercent,omitempty"`
	LatencyMicroseconds     *Latency    `json:"latencyMicroseconds,omitempty"`
}

// Result is a case with its samples and their summary.
type Result struct {
	// Name is the test's name from the plan (e.g. k8s-netperf's "TCPStream"); Group its group.
	Name      string     `json:"name,omitempty"`
	Group     string     `json:"group,omitempty"`
	Profile   Profile    `json:"profile"`
	Driver    string     `json:"driver"`
	Path      Path       `json:"path"`
	Params    Params     `json:"params"`
	Placement *Placement `json:"placement,omitempty"`
	Topology  *Topology  `json:"topology,omitempty"`
	StartTime time.Time  `json:"startTime"`
	EndTime   time.Time  `json:"endTime"`
	Samples   []Sample   `json:"samples"`
	Summary   Summary    `json:"summary"`
	// Error is set when the case as a whole failed (setup, placement, every sample failed).
	Error string   `json:"error,omitempty"`
	Notes []string `json:"notes,omitempty"`
	// Commands are the exact argv lines run for this case (server first), for reproducibility.
	Commands [][]string `json:"commands,omitempty"`
	// Metrics are cluster metrics queried from Prometheus for the case's time window.
	Metrics *ClusterMetrics `json:"metrics,omitempty"`
	// NodeResources is the mean of the successful samples' node resources (see Sample).
	NodeResources *NodeResourcesPair `json:"nodeResources,omitempty"`
	// Profiles are CPU flame graphs recorded during the case.
	Profiles []CPUProfile `json:"profiles,omitempty"`
	// Confidence is how the case's confidence target came out (nil when it had none).
	Confidence *ConfidenceOutcome `json:"confidence,omitempty"`
	// Stability flags outliers, a trend across samples and ramp-ups inside samples, on the
	// headline figure (nil when the case has no successful sample).
	Stability *Stability `json:"stability,omitempty"`
	// Programming is how a programming profile's changes were measured (cnperf programming).
	Programming *Programming `json:"programming,omitempty"`
}

// ConfidenceOutcome is how a case's confidence target came out.
type ConfidenceOutcome struct {
	ConfidenceTarget
	// Figure is the key of the headline figure the interval is about, e.g. "throughputBitsPerSecond".
	Figure string `json:"figure"`
	// Met is true when the interval got within the target.
	Met bool `json:"met"`
	// Samples is how many samples the case took (the successful ones count towards the interval).
	Samples int `json:"samples"`
	// GaveUp is set when the case stopped before its maximum because the spread of its samples
	// said the target would need more than 3 times the maximum.
	GaveUp bool `json:"gaveUp,omitempty"`
	// FinalHalfWidthPercent is the interval's half-width at the end, in percent of the mean
	// (absent when it could not be computed: fewer than two successful samples).
	FinalHalfWidthPercent *float64 `json:"finalHalfWidthPercent,omitempty"`
	// Reasons say why the target was not met: "noisy path", "trend", "outliers", "failed samples".
	Reasons []string `json:"reasons,omitempty"`
}

// Stability is what the samples of a case say about the measurement itself.
type Stability struct {
	// Figure is the key of the headline figure the checks looked at.
	Figure string `json:"figure"`
	// OutlierSamples are the indexes of samples outside median ± 3·MAD.
	OutlierSamples []int `json:"outlierSamples,omitempty"`
	// ExcludedSamples are the indexes of samples left out of the summary (excludeOutliers).
	ExcludedSamples []int `json:"excludedSamples,omitempty"`
	// Trend is a Spearman rank correlation of the figure with sample order (5 or more samples).
	Trend *Trend `json:"trend,omitempty"`
	// RampUpSamples are the indexes of samples whose first interval differs from the rest by
	// more than the noise.
	RampUpSamples []int `json:"rampUpSamples,omitempty"`
}

// Trend is a Spearman rank-correlation test of a figure against sample order.
type Trend struct {
	SpearmanRho float64 `json:"spearmanRho"`
	// PValue is two-sided; exact (every ordering counted) for up to 8 samples.
	PValue float64 `json:"pValue"`
	// Significant is true for p < 0.05.
	Significant bool `json:"significant,omitempty"`
}

// ClusterMetrics are Prometheus figures over one case's window: node CPU, the CPU and memory
// of CNI and proxy agent pods, and interface drops and errors. Rates and CPU are averages
// over the window; memory is the window's maximum.
type ClusterMetrics struct {
	// Source is the Prometheus URL (without credentials).
	Source        string    `json:"source"`
	WindowStart   time.Time `json:"windowStart"`
	WindowEnd     time.Time `json:"windowEnd"`
	WindowSeconds float64   `json:"windowSeconds"`
	// StepSeconds is the resolution of the range queries (the window split in a few steps).
	StepSeconds float64            `json:"stepSeconds"`
	Nodes       []NodeMetrics      `json:"nodes,omitempty"`
	Pods        []PodMetrics       `json:"pods,omitempty"`
	Interfaces  []InterfaceMetrics `json:"interfaces,omitempty"`
	// Warnings name metrics that were absent or queries that failed (never fatal).
	Warnings []string `json:"warnings,omitempty"`
}

// NodeMetrics is one node's CPU over the window, in percent of all its CPUs.
type NodeMetrics struct {
	// Instance is Prometheus's instance label; Node the node name when known.
	Instance          string   `json:"instance"`
	Node              string   `json:"node,omitempty"`
	CPUs              int      `json:"cpus,omitempty"`
	CPUUserPercent    *float64 `json:"cpuUserPercent,omitempty"`
	CPUSystemPercent  *float64 `json:"cpuSystemPercent,omitempty"`
	CPUSoftIRQPercent *float64 `json:"cpuSoftirqPercent,omitempty"`
	CPUBusyPercent    *float64 `json:"cpuBusyPercent,omitempty"`
	CPUBusyMaxPercent *float64 `json:"cpuBusyMaxPercent,omitempty"`
	RxDropsPerSecond  *float64 `json:"rxDropsPerSecond,omitempty"`
	TxDropsPerSecond  *float64 `json:"txDropsPerSecond,omitempty"`
	RxErrorsPerSecond *float64 `json:"rxErrorsPerSecond,omitempty"`
	TxErrorsPerSecond *float64 `json:"txErrorsPerSecond,omitempty"`
}

// PodMetrics is one agent pod's use over the window.
type PodMetrics struct {
	Namespace string `json:"namespace"`
	Pod       string `json:"pod"`
	Node      string `json:"node,omitempty"`
	// Agent names what the pod is: calico-node, cilium-agent, kube-proxy, ovs, flannel, ...
	Agent          string   `json:"agent,omitempty"`
	CPUCores       *float64 `json:"cpuCores,omitempty"`
	MemoryMaxBytes *float64 `json:"memoryMaxBytes,omitempty"`
}

// InterfaceMetrics are one network interface's drop and error rates over the window (only
// interfaces with any are listed; NodeMetrics carries the per-node totals).
type InterfaceMetrics struct {
	Instance          string  `json:"instance"`
	Device            string  `json:"device"`
	RxDropsPerSecond  float64 `json:"rxDropsPerSecond"`
	TxDropsPerSecond  float64 `json:"txDropsPerSecond"`
	RxErrorsPerSecond float64 `json:"rxErrorsPerSecond"`
	TxErrorsPerSecond float64 `json:"txErrorsPerSecond"`
}

// Failed reports whether the case failed as a whole or had any failed sample.
func (r *Result) Failed() bool { return r.Error != "" || r.Summary.SamplesFailed > 0 }

// HostInfo describes the machine cnperf ran on.
type HostInfo struct {
	Hostname    string `json:"hostname,omitempty"`
	OS          string `json:"os,omitempty"`
	Kernel      string `json:"kernel,omitempty"`
	Arch        string `json:"arch,omitempty"`
	CPUs        int    `json:"cpus,omitempty"`
	CPUModel    string `json:"cpuModel,omitempty"`
	MemoryBytes int64  `json:"memoryBytes,omitempty"`
	GoVersion   string `json:"goVersion,omitempty"`
}

// NodeInfo describes one cluster node that took part.
type NodeInfo struct {
	Name             string            `json:"name"`
	Zone             string            `json:"zone,omitempty"`
	Region           string            `json:"region,omitempty"`
	InstanceType     string            `json:"instanceType,omitempty"`
	OSImage          string            `json:"osImage,omitempty"`
	Kernel           string            `json:"kernel,omitempty"`
	Arch             string            `json:"arch,omitempty"`
	ContainerRuntime string            `json:"containerRuntime,omitempty"`
	KubeletVersion   string            `json:"kubeletVersion,omitempty"`
	InternalIP       string            `json:"internalIP,omitempty"`
	ProviderID       string            `json:"providerID,omitempty"`
	Labels           map[string]string `json:"labels,omitempty"`
	// Hardware is the node's CPU and uplink as read on the node; nil when not read.
	Hardware *NodeHardware `json:"hardware,omitempty"`
}

// NodeHardware is what a node's CPU and network interface are: read by cnperf's agent in an
// endpoint pod on the node (Source "agent"; the uplink only from a host-network pod), or from
// its node-exporter through Prometheus (Source "node-exporter").
type NodeHardware struct {
	// Source is where it was read: HardwareFromAgent or HardwareFromNodeExporter.
	Source   string `json:"source"`
	CPUModel string `json:"cpuModel,omitempty"`
	CPUCount int    `json:"cpuCount,omitempty"`
	// Kernel is the running kernel's release (uname -r).
	Kernel string `json:"kernel,omitempty"`
	// Uplink is the interface that holds the node's internal address.
	Uplink string `json:"uplink,omitempty"`
	Driver string `json:"driver,omitempty"`
	// SpeedBitsPerSecond is the link speed the driver reports (0: none; SpeedUnknown says why).
	SpeedBitsPerSecond int64 `json:"speedBitsPerSecond,omitempty"`
	// SpeedUnknown says why an identified uplink has no SpeedBitsPerSecond: SpeedNotReported
	// (the kernel has none for it: /sys/class/net/X/speed is -1 or EINVAL, e.g. some veth, a
	// link that is down) or SpeedNotRead (cnperf could not read it: node-exporter's metric
	// missing, sysfs unreadable; Note says why). Empty when the speed is known, and in results
	// written before cnperf told the two apart.
	SpeedUnknown string `json:"speedUnknown,omitempty"`
	MTUBytes     int    `json:"mtuBytes,omitempty"`
	// Offloads are the uplink's offloads by ethtool's short names ("gso", "gro", "tso",
	// "rx-checksum", "tx-checksum"): on or off; a missing name was not readable.
	Offloads map[string]bool `json:"offloads,omitempty"`
	// Note says what could not be read and why.
	Note string `json:"note,omitempty"`
}

// NodeHardware.SpeedUnknown values.
const (
	SpeedNotReported = "not reported"
	SpeedNotRead     = "not read"
)

// NodeHardware.Source values.
const (
	HardwareFromAgent        = "agent"
	HardwareFromNodeExporter = "node-exporter"
)

// Text is the hardware as a person reads it: "AMD EPYC x2, kernel 6.18.44, uplink eth0 (veth,
// 10 Gbit/s, MTU 1500; gso rx-checksum tso tx-checksum on, gro off)"; what was not read is
// left out ("" when nothing was), but for the uplink's speed, which says "speed not reported"
// (the kernel has none) or "speed not read" (SpeedUnknown).
func (h *NodeHardware) Text() string {
	if h == nil {
		return ""
	}
	var parts []string
	if h.CPUModel != "" || h.CPUCount > 0 {
		cpu := h.CPUModel
		if cpu == "" {
			cpu = "CPU"
		}
		if h.CPUCount > 0 {
			cpu += fmt.Sprintf(" x%d", h.CPUCount)
		}
		parts = append(parts, cpu)
	}
	if h.Kernel != "" {
		parts = append(parts, "kernel "+h.Kernel)
	}
	if h.Uplink != "" {
		var nic []string
		if h.Driver != "" {
			nic = append(nic, h.Driver)
		}
		if h.SpeedBitsPerSecond > 0 {
			nic = append(nic, strconv.FormatFloat(float64(h.SpeedBitsPerSecond)/1e9, 'g', 4, 64)+" Gbit/s")
		} else if h.SpeedUnknown != "" {
			nic = append(nic, "speed "+h.SpeedUnknown)
		}
		if h.MTUBytes > 0 {
			nic = append(nic, fmt.Sprintf("MTU %d", h.MTUBytes))
		}
		var on, off []string
		for _, k := range slices.Sorted(maps.Keys(h.Offloads)) {
			if h.Offloads[k] {
				on = append(on, k)
			} else {
				off = append(off, k)
			}
		}
		var offl []string
		if len(on) > 0 {
			offl = append(offl, strings.Join(on, " ")+" on")
		}
		if len(off) > 0 {
			offl = append(offl, strings.Join(off, " ")+" off")
		}
		up := "uplink " + h.Uplink
		if len(nic) > 0 || len(offl) > 0 {
			up += " (" + strings.Join(nic, ", ")
			if len(offl) > 0 {
				if len(nic) > 0 {
					up += "; "
				}
				up += strings.Join(offl, ", ")
			}
			up += ")"
		}
		parts = append(parts, up)
	}
	return strings.Join(parts, ", ")
}

// ClusterDetails describes the cluster a run measured.
type ClusterDetails struct {
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`
	NodeCount         int    `json:"nodeCount,omitempty"`
	CNI               string `json:"cni,omitempty"`
	CNIVersion        string `json:"cniVersion,omitempty"`
	// CNIMode is how the CNI carries pod traffic as the cluster shows it (Flannel's backend:
	// "vxlan", "host-gw"; Cilium's routing from cilium-config: "tunnel vxlan, eBPF, kube-proxy
	// kept"), followed by the encryption when there is one ("..., WireGuard"); empty when not
	// known.
	CNIMode string `json:"cniMode,omitempty"`
	// Encryption is how the CNI encrypts pod traffic between nodes: EncryptionNone,
	// EncryptionWireGuard or EncryptionIPsec; empty when not known (a CNI cnperf does not read
	// it from, or its configuration was not readable).
	Encryption string `json:"encryption,omitempty"`
	// NodeEncryption is true when the CNI encrypts the traffic of host-network endpoints
	// between nodes too (Cilium's encrypt-node with WireGuard).
	NodeEncryption bool       `json:"nodeEncryption,omitempty"`
	KubeProxyMode  string     `json:"kubeProxyMode,omitempty"`
	PodMTUBytes    int        `json:"podMTUBytes,omitempty"`
	Cloud          string     `json:"cloud,omitempty"`
	IPFamily       string     `json:"ipFamily,omitempty"` // "ipv4", "ipv6" or "dual-stack" (CalicoDetails.IPFamily: "dual")
	Nodes          []NodeInfo `json:"nodes,omitempty"`
	// Calico details when Calico is present (tiger-bench's ClusterDetails).
	Calico *CalicoDetails `json:"calico,omitempty"`
	// IdleFootprint is what the CNI's and the proxy's agents used on the endpoints' nodes with
	// no load, after set-up and before the measurement (as knb measures it); nil when not asked.
	IdleFootprint *IdleFootprint `json:"idleFootprint,omitempty"`
	// KubeVirt is set when the run's endpoints include VMs (--vm).
	KubeVirt *KubeVirt `json:"kubevirt,omitempty"`
}

// KubeVirt is the KubeVirt that ran a run's VMs.
type KubeVirt struct {
	Version string `json:"version,omitempty"` // its KubeVirt resource's observedKubeVirtVersion
	// Emulated: guests run in QEMU's software emulation (developerConfiguration.useEmulation).
	Emulated bool `json:"emulated,omitempty"`
}

// IdleFootprint is the CNI's and the proxy's agents' CPU and memory with no load.
type IdleFootprint struct {
	// Source is where the figures come from: "kubelet summary" (/api/v1/nodes/NODE/proxy/stats/summary).
	Source string `json:"source"`
	// WindowSeconds is how long cnperf sampled (each agent's CPU rate is over the kubelet's
	// own two readings inside it: AgentFootprint.WindowSeconds).
	WindowSeconds float64 `json:"windowSeconds"`
	// Agents are the agent pods found on the nodes, by node and component.
	Agents []AgentFootprint `json:"agents,omitempty"`
	// Note says why figures are missing (a permission, no agent pod: agents run as host processes).
	Note string `json:"note,omitempty"`
}

// AgentFootprint is one agent pod's use with no load.
type AgentFootprint struct {
	Node string `json:"node"`
	// Component is the agent recognised by its labels or name: "calico-node", "kube-proxy",
	// "cilium-agent", "flannel", ...; "other" for a host-network DaemonSet or static pod of the
	// CNI's namespaces cnperf does not know (Pod names it).
	Component string `json:"component"`
	Namespace string `json:"namespace"`
	Pod       string `json:"pod"`
	// CPUMillicores is the CPU rate over WindowSeconds (1000 = one core busy).
	CPUMillicores float64 `json:"cpuMillicores"`
	// MemoryWorkingSetBytes is the working set at the end of the window (absent when the
	// kubelet gave no memory reading: never a zero for "not read").
	MemoryWorkingSetBytes *uint64 `json:"memoryWorkingSetBytes,omitempty"`
	// WindowSeconds is the time between the kubelet's two readings the rate is taken over.
	WindowSeconds float64 `json:"windowSeconds"`
}

// The values of ClusterDetails.Encryption.
const (
	EncryptionNone      = "none"
	EncryptionWireGuard = "wireguard"
	EncryptionIPsec     = "ipsec"
)

// EncryptionText is the cluster's encryption as a person reads it: "WireGuard", "WireGuard
// incl. node traffic", "IPsec", "unencrypted"; "" when not known.
func (c *ClusterDetails) EncryptionText() string {
	if c == nil {
		return ""
	}
	var s string
	switch c.Encryption {
	case "":
		return ""
	case EncryptionNone:
		return "unencrypted"
	case EncryptionWireGuard:
		s = "WireGuard"
	case EncryptionIPsec:
		s = "IPsec"
	default:
		s = c.Encryption
	}
	if c.NodeEncryption {
		s += " incl. node traffic"
	}
	return s
}

// CalicoDetails are Calico-specific cluster details.
type CalicoDetails struct {
	Product          string `json:"product,omitempty"`
	Version          string `json:"version,omitempty"`
	Encapsulation    string `json:"encapsulation,omitempty"`
	Dataplane        string `json:"dataplane,omitempty"`
	WireguardEnabled bool   `json:"wireguardEnabled,omitempty"`
	// WireguardEnabledV6 is FelixConfiguration's wireguardEnabledV6 (WireGuard for IPv6).
	WireguardEnabledV6 bool `json:"wireguardEnabledV6,omitempty"`
	// WireguardHostEncryptionEnabled is FelixConfiguration's wireguardHostEncryptionEnabled
	// (host-to-host traffic encrypted too).
	WireguardHostEncryptionEnabled bool `json:"wireguardHostEncryptionEnabled,omitempty"`
	// IPFamily is the family of Calico's IP pools ("ipv4", "ipv6", "dual").
	IPFamily string `json:"ipFamily,omitempty"`
	// ClusterType is ClusterInformation's clusterType (e.g. "k8s,bgp,kubeadm,operator").
	ClusterType string `json:"clusterType,omitempty"`
	// CNIType is the operator Installation's spec.cni.type (e.g. "Calico", "AmazonVPC").
	CNIType string `json:"cniType,omitempty"`
}

// Timing records where a run's wall-clock time went (internal/measure: cnperf run, mesh,
// tiger-bench). TeardownSeconds is absent when the teardown was not measured (mesh runs of
// cnperf before it wrote its output after its clean-up), never 0.
type Timing struct {
	SetupSeconds    float64 `json:"setupSeconds"`
	MeasureSeconds  float64 `json:"measureSeconds"`
	TeardownSeconds float64 `json:"teardownSeconds,omitempty"`
}

// Run is one invocation of cnperf and everything it measured.
type Run struct {
	APIVersion    string    `json:"apiVersion"`
	Kind          string    `json:"kind"`
	UUID          string    `json:"uuid"`
	StartTime     time.Time `json:"startTime"`
	EndTime       time.Time `json:"endTime,omitempty"`
	CnperfVersion string    `json:"cnperfVersion"`
	Platform      string    `json:"platform"`
	// Plan is the metadata.name of the plan file the run was made from (none for flags only).
	Plan        string            `json:"plan,omitempty"`
	Imported    bool              `json:"imported,omitempty"`
	Interrupted bool              `json:"interrupted,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Host        *HostInfo         `json:"host,omitempty"`
	Cluster     *ClusterDetails   `json:"cluster,omitempty"`
	Timing      *Timing           `json:"timing,omitempty"`
	Results     []Result          `json:"results"`
	Notes       []string          `json:"notes,omitempty"`
	// TigerBench holds the tests of a tiger-bench testconfig.yaml run (standing config, TTFR,
	// DNS, Calico changes); their thruput-latency and iperf cases are in Results.
	TigerBench []TigerBenchTest `json:"tigerBench,omitempty"`
	// Mesh describes a node-pair mesh or all-to-one run (cnperf mesh); its cells index Results.
	Mesh *Mesh `json:"mesh,omitempty"`
	// PathMTU holds the path-MTU check of each path (cnperf run --check-mtu), made before
	// the path was measured.
	PathMTU []PathMTU `json:"pathMTU,omitempty"`
}
