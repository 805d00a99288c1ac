package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/runfile"
)

// counting counts what a reader consumed, to show the readers stop early.
type counting struct {
	r io.Reader
	n int64
}

func (c *counting) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// longLine produces prefix, then filler bytes up to size bytes in all, then suffix, without
// holding them: a 1 GB line that is never written to disk.
type longLine struct {
	prefix, suffix string
	filler         byte
	size, off      int64
}

func (l *longLine) Read(p []byte) (int, error) {
	total := l.size + int64(len(l.suffix))
	if l.off >= total {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && l.off < total {
		var k int
		switch {
		case l.off < int64(len(l.prefix)):
			k = copy(p[n:], l.prefix[l.off:])
		case l.off < l.size:
			k = int(min(int64(len(p)-n), l.size-l.off))
			for i := range p[n : n+k] {
				p[n+i] = l.filler
			}
		default:
			k = copy(p[n:], l.suffix[l.off-l.size:])
		}
		n += k
		l.off += int64(k)
	}
	return n, nil
}

const gigabyte = 1 << 30

// bound is what a reader may consume before giving up on an over-long line: the limit and a
// few buffers.
const bound = runfile.MaxLineBytes + 1<<20

// realLines returns the run, first result and end lines of the real lab capture.
func realLines(t *testing.T) (run, result, end string) {
	t.Helper()
	b, err := os.ReadFile("testdata/real-lab-run.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[0], lines[1], lines[len(lines)-1]
}

func TestReadDevZero(t *testing.T) {
	f, err := os.Open("/dev/zero")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	c := &counting{r: f}
	_, _, err = runfile.ReadRuns(c, "/dev/zero")
	if err == nil || !strings.Contains(err.Error(), "/dev/zero: not a cnperf results file") {
		t.Errorf("err %v", err)
	}
	if c.n > bound {
		t.Errorf("read %d bytes of /dev/zero", c.n)
	}
	// A real file followed by zeros: the zeros are a line longer than the limit.
	run, res, _ := realLines(t)
	z, _ := os.Open("/dev/zero")
	defer z.Close()
	c = &counting{r: io.MultiReader(strings.NewReader(run+"\n"+res+"\n"), z)}
	_, _, err = runfile.ReadRuns(c, "good+zero")
	if err == nil || !strings.Contains(err.Error(), "good+zero:3: line longer than 64 MiB") {
		t.Errorf("err %v", err)
	}
	if c.n > int64(len(run)+len(res))+bound {
		t.Errorf("read %d bytes", c.n)
	}
}

func TestReadGigabyteLine(t *testing.T) {
	run, res, _ := realLines(t)
	tests := []struct {
		name string
		r    io.Reader
		want string
	}{
		{"first line", &longLine{prefix: `{"type":"run","run":{"apiVersion":"`, suffix: "\"}}\n", filler: 'a', size: gigabyte},
			"-:1: line longer than 64 MiB, the limit of a results-file line"},
		{"a result line", io.MultiReader(strings.NewReader(run+"\n"+res+"\n"),
			&longLine{prefix: `{"type":"result","uuid":"x","result":{"name":"`, suffix: "\"}}\n", filler: 'a', size: gigabyte}),
			"-:3: line longer than 64 MiB"},
		{"CSV", &longLine{prefix: "run.uuid,name\nx,", suffix: "\n", filler: 'a', size: gigabyte},
			"-:2: line longer than 64 MiB"},
		{"white space only", &longLine{filler: '\n', size: gigabyte},
			"-: more than 64 MiB of white space and no data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &counting{r: tt.r}
			_, _, err := runfile.ReadRuns(c, "-")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v, want %q", err, tt.want)
			}
			if c.n > int64(len(run)+len(res))+bound {
				t.Errorf("read %d of the 1 GB before giving up", c.n)
			}
		})
	}
}

// TestReadLargeDocument: a JSON document (read whole) is bounded too.
func TestReadLargeDocument(t *testing.T) {
	c := &counting{r: &longLine{prefix: "[", filler: ' ', size: gigabyte}}
	_, _, err := runfile.ReadRuns(c, "doc.json")
	if err == nil || !strings.Contains(err.Error(), "doc.json: a JSON document larger than 96 MiB") {
		t.Errorf("err %v", err)
	}
	if c.n > runfile.MaxDocumentBytes+1<<20 {
		t.Errorf("read %d bytes", c.n)
	}
}

// contradicting is the file: every sample failed, the summary still says 3/3 and a
// throughput.
func contradicting(t *testing.T) string {
	run, res, end := realLines(t)
	var rec map[string]any
	if err := json.Unmarshal([]byte(res), &rec); err != nil {
		t.Fatal(err)
	}
	r := rec["result"].(map[string]any)
	for _, s := range r["samples"].([]any) {
		m := s.(map[string]any)
		for k := range m {
			if k != "index" && k != "startTime" && k != "endTime" {
				delete(m, k)
			}
		}
		m["error"] = "agent client: connect: connection refused"
	}
	b, _ := json.Marshal(rec)
	return run + "\n" + string(b) + "\n" + end + "\n"
}

func TestContradictingSummaryRecomputed(t *testing.T) {
	runs, warnings, err := runfile.ReadRuns(strings.NewReader(contradicting(t)), "contra.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	r := runs[0].Results[0]
	if r.Summary.SamplesFailed != 3 || r.Summary.SamplesTotal != 3 || r.Summary.ThroughputBitsPerSecond != nil || r.Summary.CPUPercent != nil {
		t.Errorf("summary not recomputed: %+v", r.Summary)
	}
	want := "contra.jsonl: line 2: TCP_STREAM native loopback: the stored summary contradicts its samples (summary: 0 of 3 samples failed; samples: 3 of 3 failed); it was recomputed from the samples"
	if len(warnings) != 1 || warnings[0] != want {
		t.Errorf("warnings %q\nwant %q", warnings, want)
	}
	var b bytes.Buffer
	if err := Encode(&b, "table", runs); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "0/3") || !strings.Contains(b.String(), "FAILED: agent client: connect: connection refused") || strings.Contains(b.String(), "Gbit/s") {
		t.Errorf("table:\n%s", b.String())
	}
	// A figure that disagrees, counts equal.
	run, res, end := realLines(t)
	res = strings.Replace(res, `"summary":{"samplesTotal":3,"samplesFailed":0,"throughputBitsPerSecond":{"n":3,"mean":`, `"summary":{"samplesTotal":3,"samplesFailed":0,"throughputBitsPerSecond":{"n":3,"mean":9`, 1)
	_, warnings, err = runfile.ReadRuns(strings.NewReader(run+"\n"+res+"\n"+end+"\n"), "f.jsonl")
	if err != nil || len(warnings) != 1 || !strings.Contains(warnings[0], "throughputBitsPerSecond: summary says mean 9") {
		t.Errorf("err %v, warnings %q", err, warnings)
	}
	// The real captures agree with themselves: no warning.
	for _, f := range []string{"testdata/real-lab-run.jsonl", "testdata/real-sweep-run.jsonl", "testdata/real-mesh-run.json"} {
		if _, w, err := runfile.ReadWarnings(f); err != nil || len(w) != 0 {
			t.Errorf("%s: err %v, warnings %q", f, err, w)
		}
	}
}

func TestImpossibleFiguresRefused(t *testing.T) {
	run, res, end := realLines(t)
	jsonl := func(from, to string) string {
		if !strings.Contains(res, from) {
			t.Fatalf("%q is not in the capture", from)
		}
		return run + "\n" + strings.Replace(res, from, to, 1) + "\n" + end + "\n"
	}
	csvFile, err := os.ReadFile("testdata/run.csv")
	if err != nil {
		t.Fatal(err)
	}
	csvWith := func(col int, v string) string {
		recs := csvRecords(t, csvFile)
		recs[2][col] = v
		var b bytes.Buffer
		w := csv.NewWriter(&b)
		if err := w.WriteAll(recs); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	tests := []struct{ name, in, want string }{
		{"negative sample figure", jsonl(`"throughputBitsPerSecond":15774776591.929955`, `"throughputBitsPerSecond":-5`),
			"f:2: samples[0].throughputBitsPerSecond is -5: this figure is never negative"},
		{"negative count", jsonl(`"retransmits":4,"bytesSent":3940810752`, `"retransmits":4,"bytesSent":-3940810752`),
			"f:2: samples[0].bytesSent is -3940810752"},
		{"negative summary count", jsonl(`"summary":{"samplesTotal":3`, `"summary":{"samplesTotal":-3`),
			"f:2: summary.samplesTotal is -3"},
		{"negative parameter", jsonl(`"params":{"durationSeconds":2`, `"params":{"durationSeconds":-2`),
			"f:2: params.durationSeconds is -2"},
		{"out of range number", jsonl(`"throughputBitsPerSecond":15774776591.929955`, `"throughputBitsPerSecond":1e999`),
			"f:2: corrupt line"},
		{"NaN in CSV", csvWith(27, "NaN"), "f:3: summary.throughputBitsPerSecond.mean is NaN: a figure must be a finite number"},
		{"Inf in CSV", csvWith(27, "+Inf"), "f:3: summary.throughputBitsPerSecond.mean is +Inf"},
		{"more failed than total in CSV", csvWith(25, "7"), "f:3: summary: samplesFailed 7 is more than samplesTotal 3"},
		{"mean above max in CSV", csvWith(27, "9e12"), "f:3: summary.throughputBitsPerSecond: mean 9e+12 and median"},
		// Issue 28 finding 7: huge finite figures made the statistics NaN ("NaN bit/s ... ok").
		{"huge sample figure", jsonl(`"throughputBitsPerSecond":15774776591.929955`, `"throughputBitsPerSecond":1e300`),
			"f:2: samples[0].throughputBitsPerSecond is 1e+300: beyond physical sense (more than 10 Tbit/s)"},
		{"huge summary figure in CSV", csvWith(27, "1e300"),
			"f:3: summary.throughputBitsPerSecond.mean is 1e+300: beyond physical sense (more than 10 Tbit/s)"},
		{"loss above 100 %", jsonl(`"retransmits":4,"bytesSent":3940810752`, `"retransmits":4,"lossPercent":150,"bytesSent":3940810752`),
			"f:2: samples[0].lossPercent is 150: beyond physical sense (more than 100 %)"},
		{"a latency of years", jsonl(`"retransmits":4,"bytesSent":3940810752`, `"retransmits":4,"jitterMicroseconds":1e17,"bytesSent":3940810752`),
			"f:2: samples[0].jitterMicroseconds is 1e+17: beyond physical sense (more than one day)"},
		{"negative in CSV", csvWith(24, "-1"), "f:3: summary.samplesTotal is -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := runfile.ReadRuns(strings.NewReader(tt.in), "f")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v\nwant %q", err, tt.want)
			}
		})
	}
	// The ci95Low of a mean near zero may be negative: not refused.
	if _, _, err := runfile.ReadWarnings("testdata/real-lab-run.jsonl"); err != nil {
		t.Error(err)
	}
	if !strings.Contains(mustRead(t, "testdata/real-lab-run.jsonl"), `"ci95Low":-`) {
		t.Error("the capture has no negative ci95Low: the check above means nothing")
	}
}

func mustRead(t *testing.T, p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestControlCharactersInOutputs: notes and tool errors with control characters and escape
// sequences give well-formed HTML and a table without control sequences (JUnit: in its own
// package).
func TestControlCharactersInOutputs(t *testing.T) {
	runs, _, err := runfile.ReadRuns(strings.NewReader(contradicting(t)), "f")
	if err != nil {
		t.Fatal(err)
	}
	hostile := "bad \x01\x1b[31mred\x1b[0m \x07\x1b]0;title\x07 \x00 ]]> \xff"
	r := &runs[0].Results[0]
	r.Notes = append(r.Notes, hostile)
	r.Samples[0].Error = hostile
	r.Error = hostile
	for _, format := range []string{"html", "table"} {
		t.Run(format, func(t *testing.T) {
			var b bytes.Buffer
			if err := Encode(&b, format, runs); err != nil {
				t.Fatal(err)
			}
			out := b.Bytes()
			for _, c := range []byte{0x00, 0x01, 0x07, 0x1b, 0xff} {
				if bytes.IndexByte(out, c) >= 0 {
					t.Errorf("output holds byte %#x", c)
				}
			}
			if !bytes.Contains(out, []byte("red")) {
				t.Errorf("the text around the control characters is lost")
			}
		})
	}
}
