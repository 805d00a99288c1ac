// Package reporttest builds the run the encoders' and the results file's tests share: every
// kind of case an encoder must handle, built in code (successful, failed and latency samples).
package reporttest

import (
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/stats"
	"github.com/cnperf/cnperf/internal/stats/hdr"
)

// F is a pointer to v.
func F(v float64) *float64 { return &v }

// I is a pointer to v.
func I(v int64) *int64 { return &v }

// T0 is when the fixture run started.
var T0 = time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)

// Sample builds a successful sample; set fills its figures.
func Sample(i int, set func(*api.Sample)) api.Sample {
	s := api.Sample{Index: i, StartTime: T0.Add(time.Duration(i) * 10 * time.Second),
		EndTime: T0.Add(time.Duration(i)*10*time.Second + 10*time.Second), DurationSeconds: 10}
	set(&s)
	return s
}

// Failed is a failed sample with its cause.
func Failed(i int, cause string) api.Sample {
	return api.Sample{Index: i, StartTime: T0, EndTime: T0, Error: cause}
}

// Hist records n transactions spread evenly from lo to hi microseconds.
func Hist(loUS, hiUS float64, n int) *api.LatencyHistogram {
	h := hdr.New()
	for i := 0; i < n; i++ {
		us := loUS + (hiUS-loUS)*float64(i)/float64(n-1)
		h.Record(int64(us * 1000))
	}
	return h.ToAPI()
}

// Result is a case of the fixture run, its summary computed from the samples.
func Result(profile api.Profile, driver string, path api.Path, msg, par int, samples []api.Sample) api.Result {
	r := api.Result{Profile: profile, Driver: driver, Path: path,
		Params:    api.Params{DurationSeconds: 10, Samples: 3, MessageSizeBytes: msg, Parallel: par},
		StartTime: T0, EndTime: T0.Add(30 * time.Second), Samples: samples}
	r.Summary = stats.Summarize(samples)
	if r.Summary.SamplesFailed == r.Summary.SamplesTotal {
		r.Error = "every sample failed"
	}
	return r
}

// CPU is a sample's CPU use, client and server.
func CPU(c, s float64) *api.SampleCPU {
	return &api.SampleCPU{Client: &api.CPUUsage{ProcessPercent: F(c)}, Server: &api.CPUUsage{ProcessPercent: F(s)}}
}

// Run is a run with every kind of case the encoders must handle: streams measured by
// two drivers, UDP with loss, RR with merged histograms, RR with tool-printed percentiles,
// CRR, a partially failed case and a failed case.
func Run() *api.Run {
	tp := func(v, rt, c, s float64) func(*api.Sample) {
		return func(x *api.Sample) {
			x.ThroughputBitsPerSecond = F(v)
			x.Retransmits = F(rt)
			x.CPU = CPU(c, s)
		}
	}
	run := &api.Run{
		APIVersion: api.APIVersion, Kind: api.KindRun, UUID: "6f1c2b9e-0d6a-4e1f-9a53-3c2d7b8e4a10",
		StartTime: T0, EndTime: T0.Add(5 * time.Minute), CnperfVersion: "v0.1.0-test", Platform: "local",
		Host:    &api.HostInfo{Hostname: "bench-1", Kernel: "6.1.0-28-amd64", Arch: "amd64", CPUs: 2},
		Cluster: &api.ClusterDetails{CNI: "calico", CNIVersion: "v3.28.0", KubernetesVersion: "v1.31.2", NodeCount: 3},
		Timing:  &api.Timing{SetupSeconds: 1.5, MeasureSeconds: 280, TeardownSeconds: 0.5},
	}
	run.Results = []api.Result{
		Result(api.TCPStream, "native", api.PathLoopback, 131072, 1, []api.Sample{
			Sample(1, tp(41.2e9, 0, 98, 87)), Sample(2, tp(40.8e9, 0, 99, 88)), Sample(3, tp(41.5e9, 2, 97, 86))}),
		Result(api.TCPStream, "iperf3", api.PathLoopback, 131072, 1, []api.Sample{
			Sample(1, tp(39.9e9, 1, 95, 80)), Sample(2, tp(40.1e9, 0, 96, 81)), Sample(3, tp(39.6e9, 0, 94, 83))}),
		Result(api.UDPStream, "native", api.PathPodPodCrossNode, 1400, 1, []api.Sample{
			Sample(1, func(x *api.Sample) {
				x.ThroughputBitsPerSecond, x.PacketsPerSecond, x.LossPercent, x.JitterMicroseconds = F(1.21e9), F(108035), F(0.12), F(8.5)
			}),
			Sample(2, func(x *api.Sample) {
				x.ThroughputBitsPerSecond, x.PacketsPerSecond, x.LossPercent, x.JitterMicroseconds = F(1.19e9), F(106250), F(0.31), F(9.1)
			}),
			Sample(3, func(x *api.Sample) {
				x.ThroughputBitsPerSecond, x.PacketsPerSecond, x.LossPercent, x.JitterMicroseconds = F(1.23e9), F(109821), F(0.08), F(7.9)
			}),
		}),
		Result(api.TCPRR, "native", api.PathPodPodSameNode, 1, 1, []api.Sample{
			Sample(1, func(x *api.Sample) { x.TransactionsPerSecond, x.Histogram = F(28411), Hist(20, 60, 1000) }),
			Sample(2, func(x *api.Sample) { x.TransactionsPerSecond, x.Histogram = F(27950), Hist(22, 70, 1000) }),
			Sample(3, func(x *api.Sample) { x.TransactionsPerSecond, x.Histogram = F(28790), Hist(19, 58, 1000) }),
		}),
		Result(api.TCPRR, "netperf", api.PathPodPodSameNode, 1, 1, []api.Sample{
			Sample(1, func(x *api.Sample) {
				x.TransactionsPerSecond = F(26100)
				x.Latency = &api.Latency{Count: I(261000), Mean: F(38.2), Min: F(18), Max: F(910), P50: F(36), P90: F(44), P99: F(71), Method: "tool"}
			}),
			Sample(2, func(x *api.Sample) {
				x.TransactionsPerSecond = F(25800)
				x.Latency = &api.Latency{Count: I(258000), Mean: F(38.7), Min: F(17), Max: F(1205), P50: F(37), P90: F(45), P99: F(75), Method: "tool"}
			}),
			Failed(3, "netperf: exited 1: establish control: are you sure there is a netserver listening on 10.244.1.7 at port 12865?"),
		}),
		Result(api.TCPCRR, "native", api.PathPodClusterIP, 1, 1, []api.Sample{
			Sample(1, func(x *api.Sample) { x.ConnectionsPerSecond, x.TransactionsPerSecond = F(9120), F(9120) }),
			Sample(2, func(x *api.Sample) { x.ConnectionsPerSecond, x.TransactionsPerSecond = F(9350), F(9350) }),
			Sample(3, func(x *api.Sample) { x.ConnectionsPerSecond, x.TransactionsPerSecond = F(9010), F(9010) }),
		}),
		Result(api.TCPStream, "native", api.PathHostHost, 131072, 4, []api.Sample{
			Failed(1, "dial tcp 10.0.0.12:7000: connect: connection refused"),
			Failed(2, "dial tcp 10.0.0.12:7000: connect: connection refused"),
			Failed(3, "dial tcp 10.0.0.12:7000: connect: connection refused"),
		}),
	}
	run.Results[2].Params.Service = false
	run.Results[5].Params.Service = true
	run.Results[6].Params.HostNetwork = true
	run.Results[3].Name = "TCPRR-1"
	run.Results[3].Group = "latency"
	return run
}
