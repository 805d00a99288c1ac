package integration

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/runfile"
	"github.com/cnperf/cnperf/internal/stats"
	"github.com/cnperf/cnperf/internal/text"
)

// TestReportRefusesPastTheReadLimit (issue 28, finding 4): `cnperf report` of a results file of
// 10^6 results (621 MB) died with the Go runtime's "fatal error: out of memory" (or the kernel's
// OOM killer under a 1 GiB cgroup) after holding about 6 times the file. Now the readers stop
// at runfile.MaxReadBytes with a clear error and exit 2, and the process stays well within
// 1 GiB. The file here is just past the limit (the reader stops at the same point for any
// larger file); the measurement with the whole 10^6-result file is in docs/reporting.md.
func TestReportRefusesPastTheReadLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and reads 130 MiB")
	}
	bin := buildCnperf(t)
	path := filepath.Join(t.TempDir(), "big.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	enc := json.NewEncoder(w)
	uuid := "b16b16b1-0000-4000-8000-000000000000"
	check := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	check(enc.Encode(map[string]any{"type": runfile.RecordRun, "run": &api.Run{APIVersion: api.APIVersion, Kind: api.KindRun,
		UUID: uuid, Platform: "local", Results: []api.Result{}}}))
	written := int64(0)
	for i := 0; written < runfile.MaxReadBytes+(2<<20); i++ {
		bps := 9e9 + float64(i%1000)*1e6
		ss := []api.Sample{{Index: 0, ThroughputBitsPerSecond: &bps}}
		r := api.Result{Profile: api.TCPStream, Driver: "native", Path: api.PathLoopback,
			Params:  api.Params{DurationSeconds: 1, Samples: 1, MessageSizeBytes: 131072 + i, Parallel: 1},
			Samples: ss, Summary: stats.Summarize(ss)}
		b, err := json.Marshal(map[string]any{"type": runfile.RecordResult, "uuid": uuid, "result": r})
		check(err)
		_, err = w.Write(append(b, '\n'))
		check(err)
		written += int64(len(b) + 1)
	}
	check(w.Flush())
	check(f.Close())

	cmd := exec.Command(bin, "report", path)
	var errOut strings.Builder
	cmd.Stderr = &errOut
	err = cmd.Run()
	code := cmd.ProcessState.ExitCode()
	rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10 // kB on Linux
	if code != 2 || !text.ContainsFolded(errOut.String(), "more than 128 MiB of runs read in one command") {
		t.Errorf("exit %d (%v), stderr:\n%s", code, err, errOut.String())
	}
	if rss >= 1<<30 {
		t.Errorf("peak RSS %d MiB: more than 1 GiB", rss>>20)
	}
	t.Logf("%d MiB read, refused with exit %d at a peak RSS of %d MiB", written>>20, code, rss>>20)
}
