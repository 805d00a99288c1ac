package uperf

import (
	"encoding/xml"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/driver/toolkit"
	"github.com/cnperf/cnperf/internal/driver/toolkit/fixture"
	"github.com/cnperf/cnperf/internal/plan"
)

// The fixtures in testdata/captured are real uperf 1.0.8 outputs on loopback, captured by
// testdata/tools/capture.sh (uperf built by .ci/install-third-party.sh), each with the profile
// it ran in testdata/captured/profiles.
const captured = "testdata/captured"

func tcase(p api.Profile, mut ...func(*api.Params)) plan.Case {
	c := plan.Case{Profile: p, Driver: Name, Path: api.PathPodPodCrossNode,
		Params: api.Params{DurationSeconds: 3, Samples: 1, Parallel: 1}}
	for _, m := range mut {
		m(&c.Params)
	}
	return c
}

var target = driver.Target{Host: "10.0.0.2"}

// profileXML is the subset of a uperf profile the tests check.
type profileXML struct {
	Name   string `xml:"name,attr"`
	Groups []struct {
		Threads      int `xml:"nthreads,attr"`
		Transactions []struct {
			Iterations string `xml:"iterations,attr"`
			Duration   string `xml:"duration,attr"`
			Flowops    []struct {
				Type    string `xml:"type,attr"`
				Options string `xml:"options,attr"`
			} `xml:"flowop"`
		} `xml:"transaction"`
	} `xml:"group"`
}

func TestProfile(t *testing.T) {
	tests := []struct {
		c       plan.Case
		threads int
		ops     string
		connect string
	}{
		{tcase(api.TCPStream), 1, "write size=65536", "remotehost=10.0.0.2 protocol=tcp port=20001"},
		{tcase(api.UDPStream, func(p *api.Params) { p.MessageSizeBytes = 1400; p.Parallel = 4 }), 4, "write size=1400", "remotehost=10.0.0.2 protocol=udp port=20001"},
		{tcase(api.TCPMaerts), 1, "read size=65536", "remotehost=10.0.0.2 protocol=tcp port=20001"},
		{tcase(api.TCPRR, func(p *api.Params) { p.MessageSizeBytes, p.ResponseSizeBytes = 64, 1024 }), 1,
			"write size=64;read size=1024", "remotehost=10.0.0.2 protocol=tcp port=20001 tcp_nodelay"},
		{tcase(api.UDPRR), 1, "write size=1;read size=1", "remotehost=10.0.0.2 protocol=udp port=20001"},
	}
	for _, tt := range tests {
		ports := make([]int, tt.threads)
		for i := range ports {
			ports[i] = 20001 + i
		}
		s, err := Profile(tt.c, "10.0.0.2", ports, 3)
		if err != nil {
			t.Fatal(err)
		}
		var p profileXML
		if err := xml.Unmarshal([]byte(s), &p); err != nil {
			t.Fatalf("%s: profile is not valid XML: %v\n%s", tt.c.Profile, err, s)
		}
		// one group of one thread per flow, flow i on data port 20001+i (uperf 1.0.8 frees a
		// fixed port's listener once per thread of a group: see the package comment)
		if p.Name != "cnperf-"+string(tt.c.Profile) || len(p.Groups) != tt.threads {
			t.Errorf("%s: %+v", tt.c.Profile, p)
			continue
		}
		for i, g := range p.Groups {
			tx := g.Transactions
			if g.Threads != 1 || len(tx) != 3 || tx[0].Iterations != "1" || tx[1].Duration != "3s" || tx[2].Flowops[0].Type != "disconnect" {
				t.Errorf("%s: group %d %+v", tt.c.Profile, i, g)
				continue
			}
			connect := strings.Replace(tt.connect, "port=20001", fmt.Sprintf("port=%d", 20001+i), 1)
			if tx[0].Flowops[0].Type != "connect" || tx[0].Flowops[0].Options != connect {
				t.Errorf("%s: connect %+v", tt.c.Profile, tx[0].Flowops[0])
			}
			var ops []string
			for _, f := range tx[1].Flowops {
				ops = append(ops, f.Type+" "+f.Options)
			}
			if strings.Join(ops, ";") != tt.ops {
				t.Errorf("%s: flowops %v", tt.c.Profile, ops)
			}
		}
	}
	if _, err := Profile(tcase(api.TCPCRR), "h", []int{1}, 3); err == nil || !strings.Contains(err.Error(), "cannot run profile TCP_CRR") {
		t.Errorf("CRR: %v", err)
	}
	if _, err := Profile(tcase(api.TCPRR), `h" evil="1`, []int{1}, 3); err == nil {
		t.Error("a host that breaks the XML was accepted")
	}
}

func TestClientArgv(t *testing.T) {
	argv, err := fixture.Argv(Driver{}, tcase(api.TCPRR, func(p *api.Params) {
		p.Options = map[string]string{"history": "true", "port": "30000"}
	}), driver.Target{Host: "svc", Ports: map[int]int{30000: 31000, 30001: 31001}}, false)
	if err != nil {
		t.Fatal(err)
	}
	if argv[0] != "sh" || argv[1] != "-c" {
		t.Fatalf("%q", argv)
	}
	script := argv[2]
	for _, want := range []string{
		`uperf -m "$d/profile.xml" -a -R -i 1 -P 31000 -X "$d/history"`,
		`remotehost=svc protocol=tcp port=31001`, HistoryMarker, "exit $rc",
	} {
		if !strings.Contains(script, want) {
			t.Errorf("script lacks %q:\n%s", want, script)
		}
	}
	// A 1-second case runs 1 s: the rate is over the transaction's duration, not between lines.
	argv, _ = fixture.Argv(Driver{}, tcase(api.TCPStream, func(p *api.Params) { p.DurationSeconds = 1 }), target, false)
	if !strings.Contains(argv[2], `duration="1s"`) || strings.Contains(argv[2], "-X") {
		t.Errorf("short case: %s", argv[2])
	}
	if _, err := fixture.Argv(Driver{}, tcase(api.TCPRR, func(p *api.Params) { p.Burst = 2 }), target, false); err == nil {
		t.Error("burst accepted")
	}
}

// TestClientScriptRuns runs the generated shell script with a stand-in "uperf" on PATH that
// checks what the script hands to uperf (the profile file and the flags) and prints a
// captured output, so the shell plumbing — heredoc, quoting, history marker, exit code,
// temp-dir cleanup — is tested without a server (the real tool runs in the integration tests).
func TestClientScriptRuns(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	fix, _ := filepath.Abs(filepath.Join(captured, "tcp_rr_p1.stdout"))
	stub := `#!/bin/sh
# stand-in for uperf: record the profile and flags, print a fixture, write a history file
prof=""; hist=""
while [ $# -gt 0 ]; do
  case "$1" in
    -m) prof="$2"; shift ;;
    -X) hist="$2"; shift ;;
  esac
  shift
done
cp "$prof" "` + dir + `/seen-profile.xml"
dirname "$prof" > "` + dir + `/seen-dir"
[ -n "$hist" ] && printf '  4242 140000  3 1000 100\n' > "$hist"
cat "` + fix + `"
exit 3
`
	if err := os.WriteFile(filepath.Join(dir, "uperf"), []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	argv, err := fixture.Argv(Driver{}, tcase(api.TCPRR, func(p *api.Params) { p.Options = map[string]string{"history": "true"} }), target, false)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"))
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 {
		t.Fatalf("exit: %v", err)
	}
	if !strings.Contains(string(out), HistoryMarker+"\n  4242 140000  3 1000 100") {
		t.Errorf("history not appended:\n%s", out)
	}
	seen, err := os.ReadFile(filepath.Join(dir, "seen-profile.xml"))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := Profile(tcase(api.TCPRR), "10.0.0.2", []int{DefaultDataPort}, 3)
	if string(seen) != want {
		t.Errorf("uperf got profile\n%s\nwant\n%s", seen, want)
	}
	tmp, _ := os.ReadFile(filepath.Join(dir, "seen-dir"))
	if _, err := os.Stat(strings.TrimSpace(string(tmp))); !os.IsNotExist(err) {
		t.Errorf("temp dir %s not removed", tmp)
	}
}

func TestServers(t *testing.T) {
	got := driver.Servers(Driver{}, []plan.Case{tcase(api.TCPRR), tcase(api.UDPStream, func(p *api.Params) { p.Parallel = 3 })})
	if len(got) != 1 || strings.Join(got[0].Argv, " ") != "uperf -s -P 20000" || len(got[0].Ports) != 7 ||
		got[0].Ports[1].Port != 20001 || got[0].Ports[5].Port != 20003 || got[0].Ports[6].Protocol != "UDP" {
		t.Errorf("%+v", got)
	}
	if _, err := fixture.Argv(Driver{}, tcase(api.TCPRR, func(p *api.Params) {
		p.Parallel = 4
		p.Options = map[string]string{"port": "20003", "dataPort": "20001"}
	}), target, false); err == nil || !strings.Contains(err.Error(), "among the data ports") {
		t.Errorf("overlapping ports: %v", err)
	}
}

// capturedOpts are the ports capture.sh gave the uperf server.
var capturedOpts = map[string]string{"port": "47361", "dataPort": "47362"}

// fixtureCase is the case of a capture made with the driver's profile.
func fixtureCase(name string) plan.Case {
	one := func(p api.Profile, mut ...func(*api.Params)) plan.Case {
		c := tcase(p, mut...)
		c.Params.DurationSeconds = 1
		c.Params.Options = capturedOpts
		if strings.HasSuffix(name, "_p4") {
			c.Params.Parallel = 4
		}
		return c
	}
	switch {
	case strings.HasPrefix(name, "tcp_maerts"):
		return one(api.TCPMaerts)
	case strings.HasPrefix(name, "udp_stream"):
		return one(api.UDPStream, func(p *api.Params) { p.MessageSizeBytes = 1400 })
	case strings.HasPrefix(name, "udp_rr"):
		return one(api.UDPRR)
	case name == "tcp_rr_m1024_p1":
		return one(api.TCPRR, func(p *api.Params) { p.MessageSizeBytes = 1024 })
	case strings.HasPrefix(name, "tcp_rr_history"):
		c := one(api.TCPRR, func(p *api.Params) { p.Parallel, p.MessageSizeBytes = 2, 64 })
		c.Params.Options = map[string]string{"port": "47361", "dataPort": "47362", "history": "true"}
		return c
	case strings.HasPrefix(name, "tcp_rr"):
		return one(api.TCPRR)
	case strings.HasPrefix(name, "tcp_stream_lat"):
		return one(api.TCPStreamLat, func(p *api.Params) { p.MessageSizeBytes, p.ResponseSizeBytes = 1024, 1 })
	default:
		return one(api.TCPStream)
	}
}

var driverFixtures = []string{"tcp_stream_p1", "tcp_maerts_p1", "udp_stream_p1", "tcp_rr_p1", "udp_rr_p1",
	"tcp_stream_p4", "tcp_maerts_p4", "udp_stream_p4", "tcp_rr_p4", "udp_rr_p4", "tcp_rr_m1024_p1", "tcp_stream_lat_p1"}

// The captures ran the driver's own profiles (one group per flow, consecutive data ports).
func TestCapturedProfilesAreTheDrivers(t *testing.T) {
	for _, name := range driverFixtures {
		c := fixtureCase(name)
		ports := make([]int, toolkit.Parallel(c))
		for i := range ports {
			ports[i] = 47362 + i
		}
		want, err := Profile(c, "127.0.0.1", ports, 1)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(captured, "profiles", name+".xml"))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("%s: captured profile\n%s\ndriver's\n%s", name, got, want)
		}
		if f := fixture.Load(t, captured, name); strings.Join(f.Argv, " ") != "uperf -m profile.xml -a -R -i 1 -P 47361" {
			t.Errorf("%s: argv %q", name, f.Argv)
		}
	}
}

func TestParseCapturedGolden(t *testing.T) {
	names := append([]string{"tcp_rr_history", "refused", "interrupted", "truncated", "garbage", "nonutf8", "fixed_port_nthreads2"}, driverFixtures...)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			f := fixture.Load(t, captured, name)
			s, err := fixture.Parse(Driver{}, fixtureCase(name), []driver.Output{f.Output()})
			var r fixture.Result
			if err != nil {
				r.Error = err.Error()
			} else {
				s.Histogram = nil // large; checked in TestHandVerified
				r.Sample = &s
			}
			fixture.Golden(t, filepath.Join("testdata/golden", name+".json"), r)
		})
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

func parse(t *testing.T, name string) api.Sample {
	t.Helper()
	f := fixture.Load(t, captured, name)
	s, err := fixture.Parse(Driver{}, fixtureCase(name), []driver.Output{f.Output()})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s
}

// lastTxn2 returns the last Txn2 raw line of a capture, for the hand checks below.
func lastTxn2(t *testing.T, name string) RawLine {
	t.Helper()
	r, err := ParseOutput(fixture.Load(t, captured, name).Stdout)
	if err != nil {
		t.Fatal(err)
	}
	var last RawLine
	for _, l := range r.Raw {
		if l.Name == "Txn2" {
			last = l
		}
	}
	return last
}

func TestHandVerified(t *testing.T) {
	// Each flow's transaction lasts the profile's 1 s: bytes of the last Txn2 line over 1 s,
	// whatever the lines' span (the last one comes when the master notices the end).
	for _, name := range []string{"tcp_stream_p1", "tcp_stream_p4"} {
		s := parse(t, name)
		l := lastTxn2(t, name)
		if !near(*s.ThroughputBitsPerSecond, float64(l.Bytes)*8) || s.DurationSeconds != 1 {
			t.Errorf("%s: %v over %v s, last line %+v", name, *s.ThroughputBitsPerSecond, s.DurationSeconds, l)
		}
	}
	// RR: two flowops (write, read) per transaction.
	for _, name := range []string{"tcp_rr_p1", "tcp_rr_p4", "udp_rr_p4"} {
		s := parse(t, name)
		l := lastTxn2(t, name)
		threads := float64(fixtureCase(name).Params.Parallel)
		if *s.Transactions != l.Ops/2 || !near(*s.TransactionsPerSecond, float64(l.Ops/2)) {
			t.Errorf("%s: %v tps, last line %+v", name, *s.TransactionsPerSecond, l)
		}
		// Without per-transaction data uperf's -a Txn table still times the transaction: its
		// mean is the measured round trip (never threads ÷ rate), and there is no p99.
		if s.Latency.Method != "tool" || s.Latency.Provenance != api.LatencyMeasured || s.Latency.P99 != nil ||
			*s.Latency.Count <= 0 || math.Abs(*s.Latency.Mean-threads/float64(l.Ops/2)*1e6) > 0.5**s.Latency.Mean {
			t.Errorf("%s latency %+v", name, s.Latency)
		}
	}
	// The figures uperf printed, read from the raw files by eye (Txn table, row Txn1).
	for name, want := range map[string][3]float64{
		"tcp_rr_p1": {24.83, 6.51, 18420}, "udp_rr_p1": {21.48, 5.78, 21910},
	} {
		lat := parse(t, name).Latency
		if !near(*lat.Mean, want[0]) || !near(*lat.Min, want[1]) || !near(*lat.Max, want[2]) {
			t.Errorf("%s: mean %v min %v max %v, uperf printed %v", name, *lat.Mean, *lat.Min, *lat.Max, want)
		}
	}
	// UDP: the slaves' operation counts over the master's (Run Statistics) give the loss.
	s := parse(t, "udp_stream_p4")
	r, _ := ParseOutput(fixture.Load(t, captured, "udp_stream_p4").Stdout)
	master, slaves, ok := r.opsSplit()
	if !ok || !near(*s.LossPercent, 100*(1-float64(slaves)/float64(master))) {
		t.Errorf("udp loss %v (%d/%d)", *s.LossPercent, slaves, master)
	}
	// tcp_rr_history: 2 flows × 300 transactions, each write start → read end.
	s = parse(t, "tcp_rr_history")
	if s.Histogram == nil || s.Histogram.Count != 600 || s.Latency.Method != "histogram" || s.Latency.P99 == nil ||
		*s.Latency.Min <= 0 || *s.Latency.P50 > *s.Latency.P99 || *s.Latency.P99 > *s.Latency.Max {
		t.Fatalf("history: %+v %+v", s.Histogram, s.Latency)
	}
}

func TestFailures(t *testing.T) {
	for name, want := range map[string]string{
		"refused":     "Error connecting to 127.0.0.1",
		"interrupted": "exited with code 124",
		"truncated":   "no Run Statistics",
		"garbage":     "no progress lines",
		"nonutf8":     "no Run Statistics",
		// uperf 1.0.8 with N threads on one fixed data port: the slave dies of a double free
		"fixed_port_nthreads2": "Error saying goodbye with 127.0.0.1",
	} {
		f := fixture.Load(t, captured, name)
		_, err := fixture.Parse(Driver{}, fixtureCase(name), []driver.Output{f.Output()})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", name, err, want)
		}
	}
	// history asked for but missing.
	f := fixture.Load(t, captured, "tcp_rr_p1")
	if _, err := fixture.Parse(Driver{}, fixtureCase("tcp_rr_history"), []driver.Output{f.Output()}); err == nil {
		t.Error("missing history accepted")
	}
}

func TestImport(t *testing.T) {
	got, err := Driver{}.Import("rr.log", fixture.Load(t, captured, "tcp_rr_history").Stdout)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Profile != api.TCPRR || got[0].Params.Parallel != 2 || got[0].Sample.Histogram == nil {
		t.Errorf("%+v", got[0])
	}
	other := strings.Replace(string(fixture.Load(t, captured, "tcp_stream_p1").Stdout), "profile:cnperf-tcp_stream", "profile:iperf", 1)
	if _, err := (Driver{}).Import("x.log", []byte(other)); err == nil || !strings.Contains(err.Error(), "give the profile") {
		t.Errorf("foreign profile: %v", err)
	}
	if got, err := (Driver{}).ImportAs("x.log", []byte(other), api.TCPStream); err != nil || got[0].Sample.ThroughputBitsPerSecond == nil {
		t.Errorf("ImportAs: %v", err)
	}
	// Every driver capture imports as its profile and thread count; an imported -R output is
	// measured over its progress lines' span, as uperf's own summary.
	for _, name := range driverFixtures {
		got, err := Driver{}.Import(name, fixture.Load(t, captured, name).Stdout)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		c := fixtureCase(name)
		if got[0].Profile != c.Profile || got[0].Params.Parallel != toolkit.Parallel(c) || got[0].Sample.DurationSeconds < 1 {
			t.Errorf("%s: %+v", name, got[0])
		}
	}
}

// TestImportDefaultOutput reads uperf's default output (no -R) and -R output of profiles as
// people write them (one group of N threads or N processes, ports picked by uperf), with the
// figures uperf printed: bytes with binary prefixes, rates with decimal ones.
func TestImportDefaultOutput(t *testing.T) {
	tests := []struct {
		name    string
		profile api.Profile
		threads int
	}{
		{"default_tcp_stream_nthreads", api.TCPStream, 4},
		{"default_tcp_stream_nprocs", api.TCPStream, 4},
		{"default_tcp_rr_nthreads", api.TCPRR, 4},
		{"default_tcp_rr_nprocs", api.TCPRR, 4},
		{"default_udp_stream_nthreads", api.UDPStream, 2},
		{"default_udp_stream_nprocs", api.UDPStream, 2},
		{"default_tcp_maerts", api.TCPMaerts, 1},
		{"default_udp_rr", api.UDPRR, 1},
		{"raw_tcp_stream_nthreads", api.TCPStream, 4},
		{"raw_tcp_stream_nprocs", api.TCPStream, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := fixture.Load(t, captured, tt.name).Stdout
			got, err := Driver{}.ImportAs(tt.name, data, tt.profile)
			if err != nil {
				t.Fatal(err)
			}
			s := got[0].Sample
			if got[0].Params.Parallel != tt.threads {
				t.Errorf("threads %d", got[0].Params.Parallel)
			}
			r, _ := ParseOutput(data)
			if l, ok := r.summary("Txn2"); ok {
				// the tool's own figures
				if tt.profile.IsRR() {
					if !near(*s.TransactionsPerSecond, float64(int64(math.Round(l.OpsPerSec*l.Seconds))/2)/l.Seconds) {
						t.Errorf("tps %v from %+v", *s.TransactionsPerSecond, l)
					}
				} else if tt.profile != api.UDPStream && *s.ThroughputBitsPerSecond != l.BitsPerSec {
					t.Errorf("throughput %v from %+v", *s.ThroughputBitsPerSecond, l)
				}
			} else if !strings.HasPrefix(tt.name, "raw_") {
				t.Error("no Txn2 summary line")
			}
			if tt.profile.IsRR() && *s.TransactionsPerSecond <= 0 || !tt.profile.IsRR() && *s.ThroughputBitsPerSecond <= 0 {
				t.Errorf("no figure: %+v", s)
			}
			fixture.Golden(t, filepath.Join("testdata/golden/import", tt.name+".json"), got)
		})
	}
	// uperf's prefixes: bytes divide by 1024, bits by 1000 (src/numbers.c decimal_to_string),
	// and the 8-character field cuts "580.30MB" to "580.30M".
	for in, want := range map[string]float64{"580.30M": 580.30 * 1024 * 1024, "4.03GB": 4.03 * 1024 * 1024 * 1024,
		"512.00B": 512, "0": 0, "1.50KB": 1536} {
		if v, err := quantity(in, "B", 1024); err != nil || !near(v, want) {
			t.Errorf("%s: %v %v, want %v", in, v, err, want)
		}
	}
	for in, want := range map[string]float64{"4.03Gb/s": 4.03e9, "32.92Mb/s": 32.92e6, "867.62Kb/s": 867.62e3, "12.00b/s": 12} {
		if v, err := quantity(in, "b/s", 1000); err != nil || !near(v, want) {
			t.Errorf("%s: %v %v, want %v", in, v, err, want)
		}
	}
	// Checked against a capture: default_tcp_stream_nthreads's Txn2 bytes and seconds give its
	// printed rate only with binary bytes (with 10^6 bytes the rate would be 4.9 % lower).
	r, _ := ParseOutput(fixture.Load(t, captured, "default_tcp_stream_nthreads").Stdout)
	l, _ := r.summary("Txn2")
	if calc := l.Bytes * 8 / l.Seconds; math.Abs(calc-l.BitsPerSec)/l.BitsPerSec > 0.01 {
		t.Errorf("Txn2 %+v: bytes×8/s = %v, uperf printed %v", l, calc, l.BitsPerSec)
	}
	// k8s-netperf's profile names say the test.
	for name, want := range map[string]api.Profile{"stream-tcp-1024-1": api.TCPStream, "rr-udp-64-2": api.UDPRR,
		"cnperf-tcp_maerts": api.TCPMaerts, "netperf": ""} {
		if got := profileFromName(name); got != want {
			t.Errorf("%s: %s", name, got)
		}
	}
}

// TestPeersCaptures imports the runs k8s-netperf makes (uperf -v -a -R -i 1 on its own
// profiles) and an RR run without -a, with the figures uperf printed read by eye from the raw
// files (testdata/tools/capture.sh uperf-peers).
func TestPeersCaptures(t *testing.T) {
	imp := func(name string) api.Sample {
		t.Helper()
		got, err := Driver{}.Import(name, fixture.Load(t, captured, name).Stdout)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		fixture.Golden(t, filepath.Join("testdata/golden/import", name+".json"), got)
		return got[0].Sample
	}
	// The round trip is uperf's own mean per transaction (Txn1 60.37us), not 1/rate.
	s := imp("k8s_tcp_rr_v")
	if l := s.Latency; l.Provenance != api.LatencyMeasured || !near(*l.Mean, 60.37) || !near(*l.Min, 13.90) || !near(*l.Max, 27360) {
		t.Errorf("k8s_tcp_rr_v latency %+v", l)
	}
	if derived := 1e6 / *s.TransactionsPerSecond; near(derived, *s.Latency.Mean) {
		t.Errorf("mean %v is 1/rate", *s.Latency.Mean)
	}
	// -v puts "[127.0.0.1] Success" before the slave's Run Statistics line: its 24485
	// operations of the master's 39523 are what was received.
	s = imp("k8s_udp_stream_v")
	if s.LossPercent == nil || !near(*s.LossPercent, 100*(1-24485.0/39523)) {
		t.Errorf("k8s_udp_stream_v loss %v, notes %q", s.LossPercent, s.Notes)
	}
	// Without -a there is no Txn table: the mean is derived from the rate and says so.
	s = imp("tcp_rr_p1_noall")
	if l := s.Latency; l.Provenance != api.LatencyDerived || l.Method != "rate-derived" || !near(*l.Mean, 1e6 / *s.TransactionsPerSecond) ||
		!strings.Contains(l.Note, "DERIVED") {
		t.Errorf("tcp_rr_p1_noall latency %+v", l)
	}
}

// TestStreamLat: TCP_STREAM_LAT as k8s-netperf runs it with uperf (16 writes of the message, 16
// reads of the small message back per transaction), the driver's run and k8s-netperf's own
// (-v, nprocs), with the figures uperf printed, read by eye from the raw files.
func TestStreamLat(t *testing.T) {
	s := parse(t, "tcp_stream_lat_p1")
	l := lastTxn2(t, "tcp_stream_lat_p1")
	// 12 transactions (Txn1 avg 83.50ms, min 334.81us, max 99.96ms): every 1-byte read waits
	// for Nagle and a delayed ACK, as the peer's profile (no tcp_nodelay) has it
	if *s.Transactions != l.Ops/32 || !near(*s.Latency.Mean, 83500) || !near(*s.Latency.Min, 334.81) || !near(*s.Latency.Max, 99960) ||
		*s.Latency.Count != 12 || s.Latency.Provenance != api.LatencyMeasured {
		t.Errorf("transactions %v (last line %+v), latency %+v", *s.Transactions, l, s.Latency)
	}
	// the stream's throughput: the written share of uperf's byte count (it counts both ways)
	if want := float64(l.Bytes) * 1024 / 1025 * 8; !near(*s.ThroughputBitsPerSecond, want) {
		t.Errorf("throughput %v, want %v", *s.ThroughputBitsPerSecond, want)
	}
	// k8s-netperf's own run: its name says only "stream", so the profile is given
	got, err := Driver{}.ImportAs("k8s", fixture.Load(t, captured, "k8s_tcp_stream_lat_v").Stdout, api.TCPStreamLat)
	if err != nil {
		t.Fatal(err)
	}
	fixture.Golden(t, filepath.Join("testdata/golden/import", "k8s_tcp_stream_lat_v.json"), got)
	if lat := got[0].Sample.Latency; got[0].Params.MessageSizeBytes != 1024 || lat == nil || !near(*lat.Mean, 76950) || *lat.Count != 13 {
		t.Errorf("k8s_tcp_stream_lat_v: %+v %+v", got[0].Params, lat)
	}
	// -X history has no meaning for this profile's transactions: refused, not misread
	c := fixtureCase("tcp_stream_lat_p1")
	c.Params.Options = map[string]string{"history": "true"}
	if _, err := (Driver{}).Job(c); err == nil || !strings.Contains(err.Error(), "history=true") {
		t.Errorf("history with TCP_STREAM_LAT: %v", err)
	}
}

// TestGarbledNumbers: a progress line whose number is no number (a real capture with one
// garbled) is not a line uperf prints: it must not be read as a zero.
func TestGarbledNumbers(t *testing.T) {
	for name, edit := range map[string][2]string{
		"tcp_rr_p1":               {"timestamp_ms:1795686861968.9946", "timestamp_ms:1795686861968.99.46"},
		"default_tcp_rr_nthreads": {"/   1.20(s)", "/   1.2.0(s)"},
	} {
		f := fixture.Load(t, captured, name)
		before, err := ParseOutput(f.Stdout)
		if err != nil {
			t.Fatal(err)
		}
		garbled := strings.Replace(string(f.Stdout), edit[0], edit[1], 1)
		if garbled == string(f.Stdout) {
			t.Fatalf("%s: %q not in the capture", name, edit[0])
		}
		after, _ := ParseOutput([]byte(garbled))
		if len(after.Raw)+len(after.Summary) != len(before.Raw)+len(before.Summary)-1 {
			t.Errorf("%s: the garbled line was read (%d progress lines, %d before)", name,
				len(after.Raw)+len(after.Summary), len(before.Raw)+len(before.Summary))
		}
		for _, l := range after.Raw {
			if l.TimestampMs == 0 {
				t.Errorf("%s: a progress line read as time 0", name)
			}
		}
	}
}
