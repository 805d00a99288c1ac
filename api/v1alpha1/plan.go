package v1alpha1

// Plan is cnperf's test plan document (apiVersion cnperf.dev/v1alpha1, kind Plan).
// Lists expand into cases in file order: groups in order, then profiles × paths × drivers ×
// message sizes × parallel × burst, each in the order written.
type Plan struct {
	APIVersion string       `json:"apiVersion" yaml:"apiVersion"`
	Kind       string       `json:"kind" yaml:"kind"`
	Metadata   PlanMetadata `json:"metadata,omitempty" yaml:"metadata,omitempty"`
	// VM makes the run's server, client or both KubeVirt VMs (the kube platform; docs/vm.md):
	// run-wide, as the flags --vm, --vm-image, ... which override its fields one by one.
	VM       *PlanVM     `json:"vm,omitempty" yaml:"vm,omitempty"`
	Defaults *TestGroup  `json:"defaults,omitempty" yaml:"defaults,omitempty"`
	Tests    []TestGroup `json:"tests" yaml:"tests"`
}

// PlanVM is a plan's VM endpoints: the settings of the flags named beside each field, which
// override them. Unset fields take the flags' defaults.
type PlanVM struct {
	// Endpoints: server, client or both (--vm).
	Endpoints string `json:"endpoints,omitempty" yaml:"endpoints,omitempty"`
	// Image is the cnperf guest image (--vm-image).
	Image string `json:"image,omitempty" yaml:"image,omitempty"`
	// Binding is the guest's pod-network binding (--vm-binding; default masquerade).
	Binding string `json:"binding,omitempty" yaml:"binding,omitempty"`
	// Sockets, Cores and Threads are the guest's CPU topology (--sockets, --cores, --threads;
	// default 1 each).
	Sockets int `json:"sockets,omitempty" yaml:"sockets,omitempty"`
	Cores   int `json:"cores,omitempty" yaml:"cores,omitempty"`
	Threads int `json:"threads,omitempty" yaml:"threads,omitempty"`
	// Memory is the guest's memory, a quantity such as 512Mi (--vm-memory).
	Memory string `json:"memory,omitempty" yaml:"memory,omitempty"`
	// StartTimeout is how long a VM may take to run and answer, a duration (--vm-start-timeout).
	StartTimeout string `json:"startTimeout,omitempty" yaml:"startTimeout,omitempty"`
}

// PlanMetadata names a plan and labels the runs made from it.
type PlanMetadata struct {
	Name   string            `json:"name,omitempty" yaml:"name,omitempty"`
	Labels map[string]string `json:"labels,omitempty" yaml:"labels,omitempty"`
}

// TestGroup is one group of tests. Unset fields inherit from the plan's defaults, then from
// cnperf's built-in defaults (duration 10s, samples 3, message size per profile, parallel 1, burst 0,
// no confidence target).
type TestGroup struct {
	Name         string    `json:"name,omitempty" yaml:"name,omitempty"`
	Profiles     []Profile `json:"profiles,omitempty" yaml:"profiles,omitempty"`
	Paths        []Path    `json:"paths,omitempty" yaml:"paths,omitempty"`
	Drivers      []string  `json:"drivers,omitempty" yaml:"drivers,omitempty"`
	MessageSizes []int     `json:"messageSizes,omitempty" yaml:"messageSizes,omitempty"`
	ResponseSize *int      `json:"responseSize,omitempty" yaml:"responseSize,omitempty"`
	Parallel     []int     `json:"parallel,omitempty" yaml:"parallel,omitempty"`
	Burst        []int     `json:"burst,omitempty" yaml:"burst,omitempty"`
	Duration     string    `json:"duration,omitempty" yaml:"duration,omitempty"`
	Warmup       string    `json:"warmup,omitempty" yaml:"warmup,omitempty"`
	Samples      *int      `json:"samples,omitempty" yaml:"samples,omitempty"`
	// MaxSamples is the most samples a case with a confidence target takes (default 30);
	// samples is then the least.
	MaxSamples *int `json:"maxSamples,omitempty" yaml:"maxSamples,omitempty"`
	// Confidence makes each case take samples until the confidence interval of its headline
	// figure is within the target (off when not set).
	Confidence *ConfidenceTarget `json:"confidence,omitempty" yaml:"confidence,omitempty"`
	// ExcludeOutliers leaves samples outside median ± 3·MAD out of the summary (they are
	// kept in the result, marked excluded).
	ExcludeOutliers *bool  `json:"excludeOutliers,omitempty" yaml:"excludeOutliers,omitempty"`
	Timeout         string `json:"timeout,omitempty" yaml:"timeout,omitempty"`
	Rate            string `json:"rate,omitempty" yaml:"rate,omitempty"` // e.g. "1G", "500M" bits/s; empty = unlimited
	HostNetwork     *bool  `json:"hostNetwork,omitempty" yaml:"hostNetwork,omitempty"`
	Service         *bool  `json:"service,omitempty" yaml:"service,omitempty"`
	IPFamily        string `json:"ipFamily,omitempty" yaml:"ipFamily,omitempty"`
	// Network puts the pod-to-pod paths' pods on a secondary network, a Multus
	// NetworkAttachmentDefinition "NAMESPACE/NAME", and measures between their addresses on it.
	Network string            `json:"network,omitempty" yaml:"network,omitempty"`
	Options map[string]string `json:"options,omitempty" yaml:"options,omitempty"`
}
