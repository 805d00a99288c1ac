package native

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/agenttoken"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/driver/toolkit/fixture"
	"github.com/cnperf/cnperf/internal/loadgen"
	"github.com/cnperf/cnperf/internal/plan"
)

var (
	capture = flag.Bool("capture", false, "rerun the real agent and rewrite testdata/captured")
)

func mkCase(p api.Profile, mut func(*api.Params)) plan.Case {
	c := plan.Case{Profile: p, Driver: Name, Path: api.PathLoopback,
		Params: api.Params{DurationSeconds: 10, Samples: 3, MessageSizeBytes: 0, Parallel: 1}}
	if mut != nil {
		mut(&c.Params)
	}
	return c
}

func TestCapabilities(t *testing.T) {
	caps := Driver{}.Capabilities()
	for _, p := range api.Profiles {
		if !caps.Supports(p) {
			t.Errorf("native cannot run %s", p)
		}
	}
	if !caps.LatencyHistogram || !caps.InlineWarmup || !caps.Burst || !caps.Parallel || !caps.Rate || !caps.CPU || !caps.ResponseSize {
		t.Errorf("capabilities %+v", caps)
	}
}

func TestArgvGolden(t *testing.T) {
	nat := driver.Target{Host: "10.96.0.10", Ports: map[int]int{7100: 30100, 7101: 30101}}
	plain := driver.Target{Host: "127.0.0.1"}
	cases := []struct {
		name   string
		c      plan.Case
		t      driver.Target
		warmup bool
	}{
		{"stream", mkCase(api.TCPStream, nil), plain, false},
		{"stream warm-up inline", mkCase(api.TCPStream, func(p *api.Params) { p.WarmupSeconds = 2; p.DurationSeconds = 2.5 }), plain, false},
		{"stream discarded warm-up", mkCase(api.TCPStream, func(p *api.Params) { p.WarmupSeconds = 2 }), plain, true},
		{"stream zerocopy nodeport", mkCase(api.TCPStream, func(p *api.Params) { p.Options = map[string]string{"zerocopy": "true"}; p.Parallel = 2 }), nat, false},
		{"sendfile", mkCase(api.TCPSendfile, func(p *api.Params) { p.MessageSizeBytes = 65536 }), plain, false},
		{"maerts", mkCase(api.TCPMaerts, nil), plain, false},
		{"udp 64 unlimited", mkCase(api.UDPStream, func(p *api.Params) { p.MessageSizeBytes = 64 }), plain, false},
		{"udp rate buffers", mkCase(api.UDPStream, func(p *api.Params) {
			p.RateBitsPerSecond = 1e9
			p.Options = map[string]string{"native.recvBuffer": "4194304", "noOffload": "yes"}
		}), plain, false},
		{"tcp rr burst cpu", mkCase(api.TCPRR, func(p *api.Params) {
			p.MessageSizeBytes = 1
			p.Burst = 16
			p.Parallel = 4
			p.Options = map[string]string{"cpu": "0,1"}
		}), plain, false},
		{"udp rr resp", mkCase(api.UDPRR, func(p *api.Params) { p.MessageSizeBytes = 64; p.ResponseSizeBytes = 1024 }), plain, false},
		{"crr rst ports", mkCase(api.TCPCRR, func(p *api.Params) {
			p.Options = map[string]string{"crrClose": "rst", "native.port": "8100", "native.dataPort": "8101", "unrelated": "x"}
		}), plain, false},
		{"crr option on rr ignored", mkCase(api.TCPRR, func(p *api.Params) { p.Options = map[string]string{"crrClose": "rst"} }), plain, false},
	}
	var b strings.Builder
	for _, tc := range cases {
		cmds, err := fixture.Client(Driver{}, tc.c, tc.t, tc.warmup)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(cmds) != 1 || cmds[0].Argv[0] != "cnperf" {
			t.Fatalf("%s: %+v", tc.name, cmds)
		}
		b.WriteString("# " + tc.name + "\n" + strings.Join(cmds[0].Argv, " ") + "\n")
	}
	srv := driver.Servers(Driver{}, []plan.Case{
		mkCase(api.TCPStream, nil), mkCase(api.TCPRR, nil),
		mkCase(api.TCPCRR, func(p *api.Params) { p.Options = map[string]string{"native.port": "8100", "native.dataPort": "8101"} }),
		{Driver: "iperf3", Profile: api.TCPStream},
	})
	for _, s := range srv {
		b.WriteString("# server " + s.Name + " ready=" + s.Ready + "\n" + strings.Join(s.Argv, " ") + "\n")
		for _, p := range s.Ports {
			b.WriteString("#   port " + p.Name + " " + p.Protocol + " " + strconv.Itoa(p.Port) + "\n")
		}
	}
	golden(t, "argv.txt", b.String())
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", "golden", name)
	if fixture.Updating() {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if string(want) != got {
		t.Fatalf("%s differs (run with -update to accept):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func TestArgvRejects(t *testing.T) {
	plain := driver.Target{Host: "h"}
	for name, c := range map[string]plan.Case{
		"zerocopy on rr":   mkCase(api.TCPRR, func(p *api.Params) { p.Options = map[string]string{"zerocopy": "1"} }),
		"bad close":        mkCase(api.TCPCRR, func(p *api.Params) { p.Options = map[string]string{"crrClose": "slam"} }),
		"bad port":         mkCase(api.TCPRR, func(p *api.Params) { p.Options = map[string]string{"port": "0"} }),
		"same ports":       mkCase(api.TCPRR, func(p *api.Params) { p.Options = map[string]string{"port": "7101"} }),
		"unknown prefixed": mkCase(api.TCPRR, func(p *api.Params) { p.Options = map[string]string{"native.turbo": "1"} }),
		"bad bool":         mkCase(api.TCPRR, func(p *api.Params) { p.Options = map[string]string{"noHistogram": "maybe"} }),
		"zero duration":    mkCase(api.TCPRR, func(p *api.Params) { p.DurationSeconds = 0 }),
		"unknown profile":  mkCase("TCP_FOO", nil),
	} {
		if _, err := fixture.Client(Driver{}, c, plain, false); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := fixture.Client(Driver{}, mkCase(api.TCPRR, nil), driver.Target{}, false); err == nil {
		t.Error("empty host accepted")
	}
}

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCapture reruns the real agent (server and client in this process) for every profile
// and rewrites testdata/captured/*.json with what `cnperf agent client --json` prints.
func TestCapture(t *testing.T) {
	if !*capture {
		t.Skip("use -capture to rewrite testdata/captured from real runs")
	}
	tok, err := agenttoken.New()
	if err != nil {
		t.Fatal(err)
	}
	s, err := loadgen.NewServer(loadgen.ServerConfig{Bind: "127.0.0.1", Token: tok})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = s.Serve(ctx) }()
	for _, p := range api.Profiles {
		cfg := loadgen.ClientConfig{Host: "127.0.0.1", Port: s.Port(), Profile: string(p), Duration: 200 * time.Millisecond,
			ClientCPU: -1, ServerCPU: -1, Burst: 1, Token: tok}
		if p == api.UDPStream {
			cfg.RateBitsPerSecond = 10e6
		}
		if !p.IsRR() {
			cfg.Burst = 0
		}
		rep, err := loadgen.Run(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.MarshalIndent(rep.Sample, "", "  ")
		if err := os.WriteFile(filepath.Join("testdata", "captured", strings.ToLower(string(p))+".json"), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestParseCaptured(t *testing.T) {
	for _, p := range api.Profiles {
		out := driver.Output{Stdout: readFixture(t, filepath.Join("captured", strings.ToLower(string(p))+".json"))}
		s, err := fixture.Parse(Driver{}, mkCase(p, nil), []driver.Output{out})
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if s.CPU == nil || s.CPU.Client == nil || s.CPU.Server == nil {
			t.Errorf("%s: no CPU", p)
		}
		if (p.IsRR() || p == api.TCPStreamLat) && (s.Histogram == nil || s.Latency == nil) {
			t.Errorf("%s: no latency", p)
		}
	}
}

func TestParseFailures(t *testing.T) {
	rr := readFixture(t, filepath.Join("captured", "tcp_rr.json"))
	var zero api.Sample
	_ = json.Unmarshal(rr, &zero)
	z := 0.0
	zero.TransactionsPerSecond = &z
	zeroJSON, _ := json.Marshal(zero)
	var badHist api.Sample
	_ = json.Unmarshal(rr, &badHist)
	badHist.Histogram.Count++
	badHistJSON, _ := json.Marshal(badHist)
	tests := []struct {
		name    string
		profile api.Profile
		out     driver.Output
		want    string
	}{
		{"empty", api.TCPRR, driver.Output{Stderr: []byte("agent client: boom")}, "printed nothing"},
		{"garbage", api.TCPRR, driver.Output{Stdout: []byte("Segmentation fault")}, "not a sample"},
		{"truncated", api.TCPRR, driver.Output{Stdout: rr[:len(rr)/2]}, "not a sample"},
		{"two documents", api.TCPRR, driver.Output{Stdout: append(append([]byte{}, rr...), rr...)}, "after the sample"},
		{"error sample", api.TCPStream, driver.Output{ExitCode: 1, Stdout: readFixture(t, "refused.json"),
			Stderr: []byte("Error: agent client: TCP_STREAM to 10.0.0.9:7100: connect to agent at 10.0.0.9:7100: connection refused")}, "connection refused"},
		{"nonzero exit", api.TCPRR, driver.Output{ExitCode: 3, Stdout: rr, Stderr: []byte("killed")}, "exited with code 3"},
		{"exec error", api.TCPRR, driver.Output{Err: context.DeadlineExceeded, Stderr: []byte("late")}, "deadline"},
		{"wrong profile figures", api.TCPStream, driver.Output{Stdout: rr}, "no throughputBitsPerSecond"},
		{"zero figure", api.TCPRR, driver.Output{Stdout: zeroJSON}, "transactionsPerSecond is 0"},
		{"bad histogram", api.TCPRR, driver.Output{Stdout: badHistJSON}, "latency histogram"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := fixture.Parse(Driver{}, mkCase(tt.profile, nil), []driver.Output{tt.out})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
			if s.ThroughputBitsPerSecond != nil || s.TransactionsPerSecond != nil {
				t.Fatalf("failed parse returned figures: %+v", s)
			}
		})
	}
	if _, err := fixture.Parse(Driver{}, mkCase(api.TCPRR, nil), nil); err == nil {
		t.Fatal("no outputs accepted")
	}
}
