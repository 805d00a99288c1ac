package uperf

import (
	"encoding/xml"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/driver/toolkit/fixture"
	"github.com/cnperf/cnperf/internal/plan"
)

// uperf is not packaged on this machine: the fixtures in testdata/manual are written by
// testdata/tools/uperf-fixtures.py with uperf's own printf formats (each .cmd file says so).
const manual = "testdata/manual"

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
	Name  string `xml:"name,attr"`
	Group struct {
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
		s, err := Profile(tt.c, "10.0.0.2", 20001, 3)
		if err != nil {
			t.Fatal(err)
		}
		var p profileXML
		if err := xml.Unmarshal([]byte(s), &p); err != nil {
			t.Fatalf("%s: profile is not valid XML: %v\n%s", tt.c.Profile, err, s)
		}
		tx := p.Group.Transactions
		if p.Name != "cnperf-"+string(tt.c.Profile) || p.Group.Threads != tt.threads || len(tx) != 3 ||
			tx[0].Iterations != "1" || tx[1].Duration != "3s" || tx[2].Flowops[0].Type != "disconnect" {
			t.Errorf("%s: %+v", tt.c.Profile, p)
			continue
		}
		if tx[0].Flowops[0].Type != "connect" || tx[0].Flowops[0].Options != tt.connect {
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
	if _, err := Profile(tcase(api.TCPCRR), "h", 1, 3); err == nil || !strings.Contains(err.Error(), "cannot run profile TCP_CRR") {
		t.Errorf("CRR: %v", err)
	}
	if _, err := Profile(tcase(api.TCPRR), `h" evil="1`, 1, 3); err == nil {
		t.Error("a host that breaks the XML was accepted")
	}
}

func TestClientArgv(t *testing.T) {
	argv, err := ClientArgv(tcase(api.TCPRR, func(p *api.Params) {
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
	// A 1-second case still runs 2 s: rates need two progress lines.
	argv, _ = ClientArgv(tcase(api.TCPStream, func(p *api.Params) { p.DurationSeconds = 1 }), target, false)
	if !strings.Contains(argv[2], `duration="2s"`) || strings.Contains(argv[2], "-X") {
		t.Errorf("short case: %s", argv[2])
	}
	if _, err := ClientArgv(tcase(api.TCPRR, func(p *api.Params) { p.Burst = 2 }), target, false); err == nil {
		t.Error("burst accepted")
	}
}

// TestClientScriptRuns runs the generated shell script with a stand-in "uperf" on PATH. uperf
// is not installed here (and is not packaged); the stand-in only checks what the script hands
// to uperf (the profile file and the flags) and prints a fixture, so the shell plumbing —
// heredoc, quoting, history marker, exit code, temp-dir cleanup — is tested for real.
func TestClientScriptRuns(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	fix, _ := filepath.Abs(filepath.Join(manual, "tcp_rr.stdout"))
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
	argv, err := ClientArgv(tcase(api.TCPRR, func(p *api.Params) { p.Options = map[string]string{"history": "true"} }), target, false)
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
	want, _ := Profile(tcase(api.TCPRR), "10.0.0.2", DefaultDataPort, 3)
	if string(seen) != want {
		t.Errorf("uperf got profile\n%s\nwant\n%s", seen, want)
	}
	tmp, _ := os.ReadFile(filepath.Join(dir, "seen-dir"))
	if _, err := os.Stat(strings.TrimSpace(string(tmp))); !os.IsNotExist(err) {
		t.Errorf("temp dir %s not removed", tmp)
	}
}

func TestServers(t *testing.T) {
	got := Driver{}.Servers([]plan.Case{tcase(api.TCPRR), tcase(api.UDPStream)})
	if len(got) != 1 || strings.Join(got[0].Argv, " ") != "uperf -s -P 20000" || len(got[0].Ports) != 3 || got[0].Ports[1].Port != 20001 {
		t.Errorf("%+v", got)
	}
}

func fixtureCase(name string) plan.Case {
	switch {
	case strings.HasPrefix(name, "tcp_maerts"):
		return tcase(api.TCPMaerts, func(p *api.Params) { p.Parallel = 2 })
	case strings.HasPrefix(name, "udp_stream"):
		return tcase(api.UDPStream, func(p *api.Params) { p.MessageSizeBytes = 1024 })
	case name == "tcp_rr":
		return tcase(api.TCPRR, func(p *api.Params) { p.Parallel = 2 })
	case name == "tcp_rr_history":
		return tcase(api.TCPRR, func(p *api.Params) {
			p.Parallel, p.MessageSizeBytes = 2, 64
			p.Options = map[string]string{"history": "true"}
		})
	default:
		return tcase(api.TCPStream)
	}
}

func TestParseManualGolden(t *testing.T) {
	for _, name := range fixture.Names(t, manual) {
		t.Run(name, func(t *testing.T) {
			f := fixture.Load(t, manual, name)
			s, err := Driver{}.Parse(fixtureCase(name), []driver.Output{f.Output()})
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
	f := fixture.Load(t, manual, name)
	s, err := Driver{}.Parse(fixtureCase(name), []driver.Output{f.Output()})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s
}

func TestHandVerified(t *testing.T) {
	// tcp_stream.stdout: Txn2 starts at the Txn1 line timestamp_ms:1767322800000.8123 and its
	// last line is timestamp_ms:1767322803002.3123 nr_bytes:3541565440.
	s := parse(t, "tcp_stream")
	secs := (1767322803002.3123 - 1767322800000.8123) / 1000
	if !near(*s.ThroughputBitsPerSecond, 3541565440*8/secs) || !near(s.DurationSeconds, secs) {
		t.Errorf("stream %v over %v s", *s.ThroughputBitsPerSecond, s.DurationSeconds)
	}
	// tcp_rr.stdout: 2 threads; Txn2 ends with nr_ops:180012 (write+read per transaction).
	s = parse(t, "tcp_rr")
	tps := float64(180012/2) / ((1767322803002.3123 - 1767322800000.8123) / 1000)
	if *s.Transactions != 90006 || !near(*s.TransactionsPerSecond, tps) {
		t.Errorf("rr tps %v", *s.TransactionsPerSecond)
	}
	// Without per-transaction data only the mean is valid: 2 threads ÷ rate; never a p99.
	if s.Latency.Method != "rate-derived" || !near(*s.Latency.Mean, 2/tps*1e6) || s.Latency.P99 != nil || s.Histogram != nil {
		t.Errorf("rr latency %+v", s.Latency)
	}
	// udp_stream.stdout Run Statistics: the slave (10.0.0.2) counted 262095 operations, the
	// master 270202; the measured window sent 270200 datagrams.
	s = parse(t, "udp_stream")
	if !near(*s.LossPercent, 100*(1-float64(262095)/float64(270202))) || *s.PacketsSent != 270200 {
		t.Errorf("udp loss %v sent %v", *s.LossPercent, *s.PacketsSent)
	}
	// tcp_rr_history: 900 transactions, each write start → read end; percentiles from them.
	s = parse(t, "tcp_rr_history")
	if s.Histogram == nil || s.Histogram.Count != 900 || s.Latency.Method != "histogram" || s.Latency.P99 == nil {
		t.Fatalf("history: %+v %+v", s.Histogram, s.Latency)
	}
	// The generator's reads wait 25, 40 or 900 µs (+0-2 µs) after 3-5 µs writes: the median
	// is about 30 µs and the maximum about 907 µs.
	if *s.Latency.P50 < 28 || *s.Latency.P50 > 32 || *s.Latency.Max < 903 || *s.Latency.Max > 908 {
		t.Errorf("history latency %+v", s.Latency)
	}
}

func TestFailures(t *testing.T) {
	for name, want := range map[string]string{
		"refused":   "Error connecting to 10.0.0.2",
		"aborted":   "Slave aborted",
		"truncated": "no Run Statistics",
		"garbage":   "no -R progress lines",
		"nonutf8":   "no Run Statistics",
	} {
		f := fixture.Load(t, manual, name)
		_, err := Driver{}.Parse(fixtureCase(name), []driver.Output{f.Output()})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", name, err, want)
		}
	}
	// history asked for but missing.
	f := fixture.Load(t, manual, "tcp_rr")
	if _, err := (Driver{}).Parse(fixtureCase("tcp_rr_history"), []driver.Output{f.Output()}); err == nil {
		t.Error("missing history accepted")
	}
}

func TestImport(t *testing.T) {
	got, err := Driver{}.Import("rr.log", fixture.Load(t, manual, "tcp_rr_history").Stdout)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Profile != api.TCPRR || got[0].Params.Parallel != 2 || got[0].Sample.Histogram == nil {
		t.Errorf("%+v", got[0])
	}
	other := strings.Replace(string(fixture.Load(t, manual, "tcp_stream").Stdout), "profile:cnperf-TCP_STREAM", "profile:iperf", 1)
	if _, err := (Driver{}).Import("x.log", []byte(other)); err == nil || !strings.Contains(err.Error(), "give the profile") {
		t.Errorf("foreign profile: %v", err)
	}
	if got, err := (Driver{}).ImportAs("x.log", []byte(other), api.TCPStream); err != nil || got[0].Sample.ThroughputBitsPerSecond == nil {
		t.Errorf("ImportAs: %v", err)
	}
}
