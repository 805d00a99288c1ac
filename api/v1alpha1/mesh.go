package v1alpha1

// NodeResources is one node's CPU and memory over a measured window, read from the node's
// /proc/stat, /proc/meminfo and /proc/uptime at the window's two edges (no Prometheus).
// CPU figures are in percent of all the node's CPUs (100 = every CPU busy).
type NodeResources struct {
	Node string `json:"node,omitempty"`
	// WindowSeconds is the window's length as the node's clock measured it (/proc/uptime).
	WindowSeconds float64 `json:"windowSeconds"`
	CPUs          int     `json:"cpus"`
	// CPUTotalPercent is busy time: everything but idle and iowait.
	CPUTotalPercent   float64 `json:"cpuTotalPercent"`
	CPUUserPercent    float64 `json:"cpuUserPercent"` // user + nice (guest time is inside user)
	CPUSystemPercent  float64 `json:"cpuSystemPercent"`
	CPUIRQPercent     float64 `json:"cpuIrqPercent"`
	CPUSoftIRQPercent float64 `json:"cpuSoftirqPercent"`
	CPUStealPercent   float64 `json:"cpuStealPercent"`
	CPUIOWaitPercent  float64 `json:"cpuIowaitPercent"`
	// MemoryUsed*Bytes are MemTotal − MemAvailable at the window's start and end.
	MemoryTotalBytes     int64 `json:"memoryTotalBytes"`
	MemoryUsedStartBytes int64 `json:"memoryUsedStartBytes"`
	MemoryUsedEndBytes   int64 `json:"memoryUsedEndBytes"`
}

// NodeResourcesPair holds the client's and the server's node over one window.
type NodeResourcesPair struct {
	Client *NodeResources `json:"client,omitempty"`
	Server *NodeResources `json:"server,omitempty"`
}

// Mesh describes a whole-cluster run: every ordered pair of nodes (or a seeded sample of
// them) scheduled in rounds in which no node takes part twice, or every node against one.
type Mesh struct {
	// Mode is "mesh" or "all-to-one".
	Mode    string   `json:"mode"`
	Nodes   []string `json:"nodes"`
	Profile Profile  `json:"profile"`
	Driver  string   `json:"driver"`
	// Metric names the figure in the matrix cells (a Summary field's JSON name, or
	// "latencyMicroseconds.p50") and Unit its unit; HigherIsBetter says which side is bad.
	Metric         string `json:"metric"`
	Unit           string `json:"unit"`
	HigherIsBetter bool   `json:"higherIsBetter"`
	// PairsTotal is how many pairs there are; Pairs how many were scheduled (fewer when sampled).
	PairsTotal int     `json:"pairsTotal"`
	Pairs      int     `json:"pairs"`
	Sampled    bool    `json:"sampled,omitempty"`
	Seed       *uint64 `json:"seed,omitempty"`
	Rounds     int     `json:"rounds"`
	// OutlierMADs is k in "median − k·MAD" (median + k·MAD when lower is better).
	OutlierMADs float64      `json:"outlierMADs"`
	Matrices    []MeshMatrix `json:"matrices"`
}

// MeshMatrix is one node × node matrix: one network (pod, host or a secondary network) and,
// for all-to-one, one way of reaching the server (direct or service) and one schedule
// (sequential or concurrent).
type MeshMatrix struct {
	// Network is "pod", "host", or a secondary network's NetworkAttachmentDefinition,
	// NAMESPACE/NAME (then Attachment says what it is).
	Network string `json:"network"`
	// Attachment is the secondary network the matrix was measured on: its CNI plugin, MTU and
	// master, and the NetworkPolicies that select the pods but do not apply there (each cell's
	// result has the pair's addresses on it in placement.attachment); nil on pod and host.
	Attachment *Attachment `json:"attachment,omitempty"`
	Via        string      `json:"via,omitempty"` // all-to-one: "direct" or "service"
	Concurrent bool        `json:"concurrent,omitempty"`
	// Median and MAD (scaled by 1.4826, as R's mad()) of the successful cells' values, and the
	// outlier threshold derived from them; absent with fewer than 3 successful cells.
	Median    *float64   `json:"median,omitempty"`
	MAD       *float64   `json:"mad,omitempty"`
	Threshold *float64   `json:"threshold,omitempty"`
	Cells     []MeshCell `json:"cells"`
}

// MeshCell is one ordered pair's measurement.
type MeshCell struct {
	Client string `json:"client"`
	Server string `json:"server"`
	Round  int    `json:"round"`
	// Result is the index of the cell's result in Run.Results.
	Result  int      `json:"result"`
	Value   *float64 `json:"value,omitempty"`
	Error   string   `json:"error,omitempty"`
	Outlier bool     `json:"outlier,omitempty"`
}

// CPUProfile is a CPU profile taken during a case and the flame graph drawn from it.
type CPUProfile struct {
	// Kind says what was recorded: "pprof" (the cnperf agent's own Go CPU profile: user-space
	// stacks of that process only) or "perf" (perf record -a -g on the node: kernel and user
	// stacks of everything that ran there).
	Kind string `json:"kind"`
	Node string `json:"node,omitempty"`
	Role string `json:"role,omitempty"` // "client" or "server"
	// SVG is the flame graph's path as written (under the --cpu-profile directory); Source
	// the same stacks in folded form ("a;b;c COUNT" lines, flamegraph.pl's input).
	SVG    string `json:"svg,omitempty"`
	Source string `json:"source,omitempty"`
	// Samples is how many stack samples the graph holds.
	Samples int64  `json:"samples"`
	Error   string `json:"error,omitempty"`
}

// Columns are a matrix's server nodes in display order: every node of a mesh, or the servers
// in cell order for all-to-one (one column).
func (m *Mesh) Columns(mat *MeshMatrix) []string {
	if m.Mode != "all-to-one" {
		return m.Nodes
	}
	seen := map[string]bool{}
	var out []string
	for _, c := range mat.Cells {
		if !seen[c.Server] {
			seen[c.Server] = true
			out = append(out, c.Server)
		}
	}
	return out
}
