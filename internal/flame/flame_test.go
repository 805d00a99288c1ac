package flame

import (
	"bytes"
	"encoding/xml"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// flameTestSpin burns d of this process's CPU time (not wall time: on a busy machine the
// profile still gets its ~100 samples per CPU second) under a name the profile must show.
//
//go:noinline
func flameTestSpin(d time.Duration) int {
	x := 0
	for start := cpuTime(); cpuTime()-start < d; {
		for i := 0; i < 10000; i++ {
			x += i * i
		}
	}
	return x
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestPprofRoundTrip(t *testing.T) {
	// A real Go CPU profile of this test process, written by runtime/pprof.
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	stop, err := ProfileCPU(path)
	if err != nil {
		t.Fatal(err)
	}
	flameTestSpin(300 * time.Millisecond)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := ParsePprof(f)
	if err != nil {
		t.Fatal(err)
	}
	if p.SampleType != "cpu" || p.Unit != "nanoseconds" || p.Samples == 0 || p.DurationNanos <= 0 {
		t.Fatalf("profile %q %q samples %d duration %d", p.SampleType, p.Unit, p.Samples, p.DurationNanos)
	}
	root := Build("cnperf", p.Stacks)
	spin := root.Find("github.com/cnperf/cnperf/internal/flame.flameTestSpin")
	if spin == 0 || 2*spin < root.Value {
		t.Fatalf("flameTestSpin has %d of %d ns: the profile does not show where the CPU went", spin, root.Value)
	}
	// Its caller is above it in every stack that has it: the test function.
	if root.Find("github.com/cnperf/cnperf/internal/flame.TestPprofRoundTrip") < spin {
		t.Fatal("stacks are not root first (the test function should contain flameTestSpin)")
	}
	var b bytes.Buffer
	if err := WriteSVG(&b, root, SVGOptions{Title: "cpu", Subtitle: "pprof", Unit: "ns"}); err != nil {
		t.Fatal(err)
	}
	checkSVG(t, b.Bytes())
	if !strings.Contains(b.String(), "flameTestSpin") {
		t.Fatal("the SVG does not name flameTestSpin")
	}
	t.Logf("%d samples, %d stacks, flameTestSpin %.0f%%, SVG %d bytes", p.Samples, len(p.Stacks), 100*float64(spin)/float64(root.Value), b.Len())
}

func TestPerfScriptGolden(t *testing.T) {
	// testdata/perf-script-dd.txt is real `perf script` output (perf 6.1, perf record -F 499
	// -g of dd reading /dev/zero): kernel and user frames, 22 events.
	f, err := os.Open("testdata/perf-script-dd.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	stacks, err := ParsePerfScript(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(stacks) != 22 {
		t.Fatalf("%d stacks, want the 22 events", len(stacks))
	}
	folded := Folded(stacks)
	golden(t, "perf-script-dd.folded", []byte(folded))
	// Folded stacks read back give the same tree.
	back, err := ParseFolded(strings.NewReader(folded))
	if err != nil {
		t.Fatal(err)
	}
	a, b := Build("all", stacks), Build("all", back)
	if a.Value != 22 || b.Value != 22 || a.Find("read_zero"+KernelSuffix) != b.Find("read_zero"+KernelSuffix) || a.Find("read_zero"+KernelSuffix) == 0 {
		t.Fatalf("trees differ: %d/%d, read_zero %d/%d", a.Value, b.Value, a.Find("read_zero"+KernelSuffix), b.Find("read_zero"+KernelSuffix))
	}
	var svg bytes.Buffer
	if err := WriteSVG(&svg, a, SVGOptions{Title: "dd", Subtitle: "perf record -a -g (kernel and user stacks)"}); err != nil {
		t.Fatal(err)
	}
	checkSVG(t, svg.Bytes())
	golden(t, "perf-script-dd.svg", svg.Bytes())
}

func TestPerfScriptFormats(t *testing.T) {
	in := "# comment line\n" +
		"Web Content 4242/4243 [001] 1.000: 1 cycles:\n" +
		"\t    7f00 [unknown] (/usr/lib/libxul.so)\n" +
		"\tffff0001 schedule+0x10 ([kernel.kallsyms])\n" +
		"\n" +
		"swapper     0 [000] 1.001: 1 cycles:\n" +
		"\n" +
		"x 1 2.0: 1 cycles:\n\t 1 [unknown] ([unknown])\n" +
		"\n" +
		"kube-apiserver 9 1.0: 1 cycles:\n\t 3 [unknown] (/k)\n\t 2 [unknown] (/k)\n\t 1 main (/k)\n\t 0 [unknown] (/k)\n"
	stacks, err := ParsePerfScript(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	got := Folded(stacks)
	want := "Web Content;schedule [k];[libxul.so] 1\nkube-apiserver;[k];main;[k] 1\nswapper 1\nx;[unknown] 1\n"
	if got != want {
		t.Fatalf("folded:\n%s\nwant:\n%s", got, want)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		fn   func() error
		want string
	}{
		{"pprof empty", func() error { _, err := ParsePprof(strings.NewReader("")); return err }, "empty profile"},
		{"pprof garbage", func() error { _, err := ParsePprof(strings.NewReader("\xff\xff\xff")); return err }, "pprof"},
		{"pprof bad gzip", func() error { _, err := ParsePprof(strings.NewReader("\x1f\x8bxx")); return err }, "gzip"},
		{"perf orphan frame", func() error { _, err := ParsePerfScript(strings.NewReader("\tffff sym (dso)\n")); return err }, "outside an event"},
		{"perf bad frame", func() error { _, err := ParsePerfScript(strings.NewReader("a 1 x:\n\tnot a frame\n")); return err }, "line 2"},
		{"perf bad header", func() error { _, err := ParsePerfScript(strings.NewReader("nopid\n")); return err }, "event header"},
		{"perf nothing", func() error { _, err := ParsePerfScript(strings.NewReader("\n")); return err }, "no samples"},
		{"folded no count", func() error { _, err := ParseFolded(strings.NewReader("a;b\n")); return err }, "no count"},
		{"folded bad count", func() error { _, err := ParseFolded(strings.NewReader("a;b x\n")); return err }, "not a whole number"},
		{"svg empty", func() error { return WriteSVG(&bytes.Buffer{}, Build("x", nil), SVGOptions{}) }, "no samples"},
	} {
		err := tc.fn()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestFit(t *testing.T) {
	for _, tc := range []struct {
		name string
		w    float64
		want string
	}{
		{"runtime.mallocgc", 1000, "runtime.mallocgc"},
		{"runtime.mallocgc", 60, "runti.."}, // (60−6)/7.08 px = 7 characters
		{"runtime.mallocgc", 20, ""},
	} {
		if got := fit(tc.name, tc.w); got != tc.want {
			t.Errorf("fit(%q, %v) = %q, want %q", tc.name, tc.w, got, tc.want)
		}
	}
}

// checkSVG parses the document as XML and checks it references nothing outside itself.
func checkSVG(t *testing.T, b []byte) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := dec.Token()
		if err != nil {
			if err.Error() == "EOF" {
				break
			}
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			if se.Name.Local == "script" || se.Name.Local == "image" || se.Name.Local == "use" {
				t.Fatalf("SVG has a <%s> element", se.Name.Local)
			}
			for _, a := range se.Attr {
				if a.Name.Local == "href" {
					t.Fatalf("SVG references %s", a.Value)
				}
			}
		}
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from the golden file (check, then run with -update)", name)
	}
}
