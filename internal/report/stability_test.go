package report

import (
	"bytes"
	"strings"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/report/compare"
	"github.com/cnperf/cnperf/internal/runfile"
)

// testdata/real-adaptive-run.jsonl is a real run on this machine's loopback:
//
//	cnperf run --profile TCP_STREAM,TCP_RR --duration 0.6s --confidence 95,5 --samples 3,6 \
//	    --exclude-outliers --results real-adaptive-run.jsonl
//
// Its samples carry intervals and steady-state comparisons (some first intervals slower than
// the rest: negative percentages), its results the confidence outcome and stability.
func readAdaptive(t *testing.T) *api.Run {
	t.Helper()
	runs, warnings, err := runfile.ReadWarnings("testdata/real-adaptive-run.jsonl")
	if err != nil || len(warnings) != 0 {
		t.Fatalf("err %v, warnings %q", err, warnings)
	}
	return runs[0]
}

func TestRealAdaptiveRunReads(t *testing.T) {
	r := readAdaptive(t)
	if !strings.Contains(mustRead(t, "testdata/real-adaptive-run.jsonl"), `"firstIntervalPercent":-`) {
		t.Error("the capture has no negative firstIntervalPercent: the read above proves nothing about it")
	}
	for _, res := range r.Results {
		if res.Confidence == nil || res.Stability == nil || res.Confidence.Samples != len(res.Samples) {
			t.Errorf("%s: confidence %+v, stability %+v", res.Profile, res.Confidence, res.Stability)
		}
		for _, s := range res.Samples {
			if len(s.Intervals) != 6 || s.SteadyState == nil {
				t.Errorf("%s sample %d: %d intervals, steady state %v", res.Profile, s.Index, len(s.Intervals), s.SteadyState)
			}
		}
	}
}

func TestTableAdaptiveGolden(t *testing.T) {
	tableGolden(t, "table-adaptive", readAdaptive(t))
}

func TestChecksInHTMLAndCompare(t *testing.T) {
	r := readAdaptive(t)
	html := string(encode(t, "html", r))
	if !strings.Contains(html, "<th>Checks</th>") || !strings.Contains(html, "CI ±") {
		t.Error("the HTML report has no Checks column with the confidence outcome")
	}
	c, err := compare.Compare([]compare.Input{{Label: "a", Runs: []*api.Run{r}}, {Label: "b", Runs: []*api.Run{r}}}, compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := compare.Write(&b, c, "table"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "checks") || !strings.Contains(b.String(), "CI ±") || c.Cases[0].Checks == nil {
		t.Errorf("compare has no checks row:\n%s", b.String())
	}
}
