package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/stats"
	"github.com/cnperf/cnperf/internal/stats/hdr"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden file (go test -update to accept):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func fp(v float64) *float64 { return &v }
func ip(v int64) *int64     { return &v }

var t0 = time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)

// sample builds a successful sample; set fills its figures.
func sample(i int, set func(*api.Sample)) api.Sample {
	s := api.Sample{Index: i, StartTime: t0.Add(time.Duration(i) * 10 * time.Second),
		EndTime: t0.Add(time.Duration(i)*10*time.Second + 10*time.Second), DurationSeconds: 10}
	set(&s)
	return s
}

func failed(i int, cause string) api.Sample {
	return api.Sample{Index: i, StartTime: t0, EndTime: t0, Error: cause}
}

// hist records n transactions spread evenly from lo to hi microseconds.
func hist(loUS, hiUS float64, n int) *api.LatencyHistogram {
	h := hdr.New()
	for i := 0; i < n; i++ {
		us := loUS + (hiUS-loUS)*float64(i)/float64(n-1)
		h.Record(int64(us * 1000))
	}
	return h.ToAPI()
}

func result(profile api.Profile, driver string, path api.Path, msg, par int, samples []api.Sample) api.Result {
	r := api.Result{Profile: profile, Driver: driver, Path: path,
		Params:    api.Params{DurationSeconds: 10, Samples: 3, MessageSizeBytes: msg, Parallel: par},
		StartTime: t0, EndTime: t0.Add(30 * time.Second), Samples: samples}
	r.Summary = stats.Summarize(samples)
	if r.Summary.SamplesFailed == r.Summary.SamplesTotal {
		r.Error = "every sample failed"
	}
	return r
}

func cpu(c, s float64) *api.SampleCPU {
	return &api.SampleCPU{Client: &api.CPUUsage{ProcessPercent: fp(c)}, Server: &api.CPUUsage{ProcessPercent: fp(s)}}
}

// fixtureRun is a run with every kind of case the encoders must handle: streams measured by
// two drivers, UDP with loss, RR with merged histograms, RR with tool-printed percentiles,
// CRR, a partially failed case and a failed case.
func fixtureRun() *api.Run {
	tp := func(v, rt, c, s float64) func(*api.Sample) {
		return func(x *api.Sample) {
			x.ThroughputBitsPerSecond = fp(v)
			x.Retransmits = fp(rt)
			x.CPU = cpu(c, s)
		}
	}
	run := &api.Run{
		APIVersion: api.APIVersion, Kind: api.KindRun, UUID: "6f1c2b9e-0d6a-4e1f-9a53-3c2d7b8e4a10",
		StartTime: t0, EndTime: t0.Add(5 * time.Minute), CnperfVersion: "v0.1.0-test", Platform: "local",
		Host:    &api.HostInfo{Hostname: "bench-1", Kernel: "6.1.0-28-amd64", Arch: "amd64", CPUs: 2},
		Cluster: &api.ClusterDetails{CNI: "calico", CNIVersion: "v3.28.0", KubernetesVersion: "v1.31.2", NodeCount: 3},
		Timing:  &api.Timing{SetupSeconds: 1.5, MeasureSeconds: 280, TeardownSeconds: 0.5},
	}
	run.Results = []api.Result{
		result(api.TCPStream, "native", api.PathLoopback, 131072, 1, []api.Sample{
			sample(1, tp(41.2e9, 0, 98, 87)), sample(2, tp(40.8e9, 0, 99, 88)), sample(3, tp(41.5e9, 2, 97, 86))}),
		result(api.TCPStream, "iperf3", api.PathLoopback, 131072, 1, []api.Sample{
			sample(1, tp(39.9e9, 1, 95, 80)), sample(2, tp(40.1e9, 0, 96, 81)), sample(3, tp(39.6e9, 0, 94, 83))}),
		result(api.UDPStream, "native", api.PathPodPodCrossNode, 1400, 1, []api.Sample{
			sample(1, func(x *api.Sample) {
				x.ThroughputBitsPerSecond, x.PacketsPerSecond, x.LossPercent, x.JitterMicroseconds = fp(1.21e9), fp(108035), fp(0.12), fp(8.5)
			}),
			sample(2, func(x *api.Sample) {
				x.ThroughputBitsPerSecond, x.PacketsPerSecond, x.LossPercent, x.JitterMicroseconds = fp(1.19e9), fp(106250), fp(0.31), fp(9.1)
			}),
			sample(3, func(x *api.Sample) {
				x.ThroughputBitsPerSecond, x.PacketsPerSecond, x.LossPercent, x.JitterMicroseconds = fp(1.23e9), fp(109821), fp(0.08), fp(7.9)
			}),
		}),
		result(api.TCPRR, "native", api.PathPodPodSameNode, 1, 1, []api.Sample{
			sample(1, func(x *api.Sample) { x.TransactionsPerSecond, x.Histogram = fp(28411), hist(20, 60, 1000) }),
			sample(2, func(x *api.Sample) { x.TransactionsPerSecond, x.Histogram = fp(27950), hist(22, 70, 1000) }),
			sample(3, func(x *api.Sample) { x.TransactionsPerSecond, x.Histogram = fp(28790), hist(19, 58, 1000) }),
		}),
		result(api.TCPRR, "netperf", api.PathPodPodSameNode, 1, 1, []api.Sample{
			sample(1, func(x *api.Sample) {
				x.TransactionsPerSecond = fp(26100)
				x.Latency = &api.Latency{Count: ip(261000), Mean: fp(38.2), Min: fp(18), Max: fp(910), P50: fp(36), P90: fp(44), P99: fp(71), Method: "tool"}
			}),
			sample(2, func(x *api.Sample) {
				x.TransactionsPerSecond = fp(25800)
				x.Latency = &api.Latency{Count: ip(258000), Mean: fp(38.7), Min: fp(17), Max: fp(1205), P50: fp(37), P90: fp(45), P99: fp(75), Method: "tool"}
			}),
			failed(3, "netperf: exited 1: establish control: are you sure there is a netserver listening on 10.244.1.7 at port 12865?"),
		}),
		result(api.TCPCRR, "native", api.PathPodClusterIP, 1, 1, []api.Sample{
			sample(1, func(x *api.Sample) { x.ConnectionsPerSecond, x.TransactionsPerSecond = fp(9120), fp(9120) }),
			sample(2, func(x *api.Sample) { x.ConnectionsPerSecond, x.TransactionsPerSecond = fp(9350), fp(9350) }),
			sample(3, func(x *api.Sample) { x.ConnectionsPerSecond, x.TransactionsPerSecond = fp(9010), fp(9010) }),
		}),
		result(api.TCPStream, "native", api.PathHostHost, 131072, 4, []api.Sample{
			failed(1, "dial tcp 10.0.0.12:7000: connect: connection refused"),
			failed(2, "dial tcp 10.0.0.12:7000: connect: connection refused"),
			failed(3, "dial tcp 10.0.0.12:7000: connect: connection refused"),
		}),
	}
	run.Results[2].Params.Service = false
	run.Results[5].Params.Service = true
	run.Results[6].Params.HostNetwork = true
	run.Results[3].Name = "TCPRR-1"
	run.Results[3].Group = "latency"
	return run
}
