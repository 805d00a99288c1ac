package main

import (
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/runfile"
	"github.com/cnperf/cnperf/internal/runner"
)

// parseRules reads "N,F;N,F" into futility rules.
func parseRules(s string) ([]runner.Futility, error) {
	var out []runner.Futility
	for _, part := range strings.Split(s, ";") {
		a, b, ok := strings.Cut(strings.TrimSpace(part), ",")
		n, err1 := strconv.Atoi(a)
		f, err2 := strconv.Atoi(b)
		if !ok || err1 != nil || err2 != nil || n < 2 || f < 1 {
			return nil, fmt.Errorf("-rules: %q is not N,F (N >= 2 samples, F >= 1)", part)
		}
		out = append(out, runner.Futility{MinSamples: n, Factor: f})
	}
	return out, nil
}

// replayed is what one rule would have done with one recorded case.
type replayed struct {
	met       bool
	samples   int
	seconds   float64 // from the case's start to the end of its last sample
	truncated bool    // the rule wanted more samples than the recording has
}

// replayCase walks the recorded samples of a case with a confidence target through the
// runner's stopping rule with rule in place of the default, as the runner would have taken
// them. A rule that stops no later than the recording needs nothing that was not measured; one
// that would go on past it is marked truncated.
func replayCase(res *api.Result, rule runner.Futility) replayed {
	limit := runner.SampleLimit(plan.Case{Params: res.Params})
	var out replayed
	for n := 1; n <= len(res.Samples); n++ {
		prefix := append([]api.Sample(nil), res.Samples[:n]...)
		why := runner.Stop(prefix, &res.Params, res.Profile, limit, rule)
		out.samples, out.seconds = n, res.Samples[n-1].EndTime.Sub(res.StartTime).Seconds()
		if why != runner.Continue {
			out.met = why == runner.TargetMet
			return out
		}
	}
	out.truncated = true
	return out
}

// replayDir prints, per plan (the file name up to its first "-") and rule, how many cases with
// a confidence target would have met it, in how much time.
func replayDir(w io.Writer, dir, ruleList string) error {
	rules, err := parseRules(ruleList)
	if err != nil {
		return err
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return err
	}
	cases := map[string][]*api.Result{}
	for _, f := range files {
		if filepath.Base(f) == "outcomes.json" {
			continue
		}
		runs, err := runfile.Read(f)
		if err != nil {
			return err
		}
		pl, _, _ := strings.Cut(filepath.Base(f), "-")
		for _, r := range runs {
			for i := range r.Results {
				if res := &r.Results[i]; res.Params.Confidence != nil && len(res.Samples) > 0 {
					cases[pl] = append(cases[pl], res)
				}
			}
		}
	}
	if len(cases) == 0 {
		return fmt.Errorf("%s: no case with a confidence target in its *.json run files", dir)
	}
	var plans []string
	for p := range cases {
		plans = append(plans, p)
	}
	sort.Strings(plans)
	fmt.Fprintf(w, "| rule (give up after N samples when the target needs more than F × the maximum) |")
	for _, p := range plans {
		fmt.Fprintf(w, " %s: met, time, cases per minute |", p)
	}
	fmt.Fprintf(w, "\n| --- |%s\n", strings.Repeat(" --- |", len(plans)))
	for _, rule := range rules {
		mark := ""
		if rule == runner.DefaultFutility {
			mark = " (the default)"
		}
		fmt.Fprintf(w, "| N %d, F %d%s |", rule.MinSamples, rule.Factor, mark)
		for _, p := range plans {
			met, truncated := 0, 0
			secs := 0.0
			for _, res := range cases[p] {
				r := replayCase(res, rule)
				secs += r.seconds
				if r.met {
					met++
				}
				if r.truncated {
					truncated++
				}
			}
			cell := fmt.Sprintf(" %d/%d, %.0f s, %.2f", met, len(cases[p]), secs, float64(met)/secs*60)
			if truncated > 0 {
				cell += fmt.Sprintf(" (%d cases would have gone on past the recording)", truncated)
			}
			fmt.Fprintf(w, "%s |", cell)
		}
		fmt.Fprintln(w)
	}
	return nil
}
