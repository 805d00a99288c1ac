// Command adaptive measures what adaptive sampling buys: the same plan run with a fixed number
// of samples and with a confidence target, alternately in the same session, on the same
// machine. For every run it records the wall time and, per case, the 95 % confidence
// half-width of the headline figure in percent of its mean; it prints, per plan and variant,
// the median wall time, the share of cases within ±5 % at 95 %, and those cases per minute.
//
//	go run ./bench/cmd/adaptive -cnperf bin/cnperf [-rounds 2] [-plans loopback,lab] [-out DIR]
//
// Plans: "loopback" is the built-in default suite (five profiles, native driver, loopback,
// 2 s samples); "lab" is TCP_STREAM, TCP_RR and TCP_CRR on the lab's routed cross-node path
// (pod-pod-cross-node, network namespaces; needs root). Variants (-variants) are named sets of
// extra flags; the default compares "fixed3" (--samples 3, today's default) with "adaptive"
// (--confidence 95,5 --samples 3,30). Rounds alternate the order of the variants (ABBA) so
// that drift in the machine's load hits both alike.
//
// This is a benchmark, not a test: it asserts nothing and takes minutes (each adaptive case
// may take up to 30 samples).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/figure"
	"github.com/cnperf/cnperf/internal/runfile"
	"github.com/cnperf/cnperf/internal/stats"
)

var plans = map[string][]string{
	"loopback": {"--platform", "local", "--path", "loopback", "--driver", "native",
		"--profile", "TCP_STREAM,TCP_MAERTS,UDP_STREAM,TCP_RR,TCP_CRR", "--duration", "2s"},
	"lab": {"--platform", "local", "--path", "pod-pod-cross-node", "--overlay", "routed", "--driver", "native",
		"--profile", "TCP_STREAM,TCP_RR,TCP_CRR", "--duration", "2s"},
}

const defaultVariants = "fixed3=--samples 3;adaptive=--confidence 95,5 --samples 3,30"

type variant struct {
	name string
	args []string
}

// caseOutcome is one case of one run.
type caseOutcome struct {
	Case             string   `json:"case"`
	Profile          string   `json:"profile"`
	Samples          int      `json:"samples"`
	HalfWidthPercent *float64 `json:"halfWidthPercent,omitempty"` // 95 % CI of the headline figure, % of mean
	Within           bool     `json:"within"`
	Checks           []string `json:"checks,omitempty"`
	// FirstIntervalPercents are the samples' steadyState.firstIntervalPercent, NoisePercents
	// their noisePercent, RampUps how many were flagged.
	FirstIntervalPercents []float64 `json:"firstIntervalPercents,omitempty"`
	NoisePercents         []float64 `json:"noisePercents,omitempty"`
	RampUps               int       `json:"rampUps"`
}

type runOutcome struct {
	Plan        string        `json:"plan"`
	Variant     string        `json:"variant"`
	Round       int           `json:"round"`
	WallSeconds float64       `json:"wallSeconds"`
	Cases       []caseOutcome `json:"cases"`
	Error       string        `json:"error,omitempty"`
}

func main() {
	bin := flag.String("cnperf", "bin/cnperf", "the cnperf binary to run")
	rounds := flag.Int("rounds", 2, "rounds per plan; each runs every variant once, order alternating")
	planList := flag.String("plans", "loopback,lab", "plans to run: loopback, lab")
	variantList := flag.String("variants", defaultVariants, "NAME=FLAGS;NAME=FLAGS: the variants to compare")
	target := flag.Float64("target", 5, "half-width in percent of the mean that counts as within target (at 95 %)")
	outDir := flag.String("out", "", "directory for each run's JSON and the outcomes (kept); empty: a temporary one, removed")
	reprint := flag.String("reprint", "", "run nothing: print the tables again from a directory an earlier -out wrote")
	replay := flag.String("replay", "", "run nothing: replay the samples of the runs with a confidence target in a directory an earlier -out wrote through the stopping rule with each of -rules")
	rules := flag.String("rules", "6,3;6,1;4,2;4,1;3,1", "with -replay: N,F;N,F...: give up after N samples when the target needs more than F × the maximum")
	flag.Parse()
	if *replay != "" {
		if err := replayDir(os.Stdout, *replay, *rules); err != nil {
			fmt.Fprintln(os.Stderr, "adaptive:", err)
			os.Exit(1)
		}
		return
	}
	if *reprint != "" {
		if err := reprintDir(*reprint, *target); err != nil {
			fmt.Fprintln(os.Stderr, "adaptive:", err)
			os.Exit(1)
		}
		return
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *bin, *rounds, strings.Split(*planList, ","), *variantList, *target, *outDir); err != nil {
		fmt.Fprintln(os.Stderr, "adaptive:", err)
		os.Exit(1)
	}
}

func parseVariants(s string) ([]variant, error) {
	var out []variant
	for _, part := range strings.Split(s, ";") {
		name, args, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("-variants: %q is not NAME=FLAGS", part)
		}
		out = append(out, variant{name: name, args: strings.Fields(args)})
	}
	return out, nil
}

func run(ctx context.Context, bin string, rounds int, planNames []string, variantList string, target float64, outDir string) error {
	variants, err := parseVariants(variantList)
	if err != nil {
		return err
	}
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("-cnperf: %w (make build)", err)
	}
	keep := outDir != ""
	if !keep {
		if outDir, err = os.MkdirTemp("", "cnperf-adaptive-"); err != nil {
			return err
		}
		defer os.RemoveAll(outDir)
	} else if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	var all []runOutcome
	for _, pn := range planNames {
		base, ok := plans[pn]
		if !ok {
			return fmt.Errorf("-plans: unknown plan %q (loopback, lab)", pn)
		}
		for r := 0; r < rounds; r++ {
			order := append([]variant(nil), variants...)
			if r%2 == 1 {
				for i, j := 0, len(order)-1; i < j; i, j = i+1, j-1 {
					order[i], order[j] = order[j], order[i]
				}
			}
			for _, v := range order {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				file := filepath.Join(outDir, fmt.Sprintf("%s-%s-%d.json", pn, v.name, r+1))
				ro := runOnce(ctx, bin, append(append([]string(nil), base...), v.args...), file, target)
				ro.Plan, ro.Variant, ro.Round = pn, v.name, r+1
				fmt.Fprintf(os.Stderr, "%s %s round %d: %.0f s, %d of %d cases within ±%g%% %s\n", pn, v.name, r+1,
					ro.WallSeconds, within(ro.Cases), len(ro.Cases), target, ro.Error)
				all = append(all, ro)
			}
		}
	}
	if keep {
		b, _ := json.MarshalIndent(all, "", "  ")
		if err := os.WriteFile(filepath.Join(outDir, "outcomes.json"), b, 0o644); err != nil {
			return err
		}
	}
	printTable(all, planNames, variants, target)
	printSteady(all, planNames)
	return nil
}

func runOnce(ctx context.Context, bin string, args []string, file string, target float64) runOutcome {
	argv := append([]string{"run", "-o", "json", "--no-progress", "--results", file}, args...)
	cmd := exec.CommandContext(ctx, bin, argv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	ro := runOutcome{WallSeconds: time.Since(start).Seconds()}
	var r api.Run
	if jerr := json.Unmarshal(stdout.Bytes(), &r); jerr != nil {
		ro.Error = fmt.Sprintf("no run (%v): %v: %s", err, jerr, lastLine(stderr.String()))
		return ro
	}
	if err != nil {
		ro.Error = fmt.Sprintf("exit: %v: %s", err, lastLine(stderr.String()))
	}
	ro.Cases = outcomes(&r, target)
	return ro
}

// outcomes is each case's headline half-width at 95 % and its samples' steady state.
func outcomes(r *api.Run, target float64) []caseOutcome {
	var out []caseOutcome
	for i := range r.Results {
		res := &r.Results[i]
		co := caseOutcome{Case: figure.CaseLabel(res), Profile: string(res.Profile), Samples: res.Summary.SamplesTotal, Checks: figure.Checks(res)}
		if f, ok := figure.Main(res); ok {
			if st := f.Stat(&res.Summary); st != nil && st.N >= 2 && st.Mean != 0 {
				w := stats.CIHalfWidth(st.Stddev, st.N) / math.Abs(st.Mean) * 100
				co.HalfWidthPercent = &w
				co.Within = w <= target
			}
		}
		for _, s := range res.Samples {
			if ss := s.SteadyState; ss != nil && !s.Warmup && s.Error == "" {
				co.FirstIntervalPercents = append(co.FirstIntervalPercents, ss.FirstIntervalPercent)
				co.NoisePercents = append(co.NoisePercents, ss.NoisePercent)
				if ss.RampUp {
					co.RampUps++
				}
			}
		}
		out = append(out, co)
	}
	return out
}

// reprintDir prints the tables from an -out directory: wall times from outcomes.json, cases
// recomputed from each run's results file.
func reprintDir(dir string, target float64) error {
	b, err := os.ReadFile(filepath.Join(dir, "outcomes.json"))
	if err != nil {
		return err
	}
	var all []runOutcome
	if err := json.Unmarshal(b, &all); err != nil {
		return fmt.Errorf("%s/outcomes.json: %w", dir, err)
	}
	var planNames []string
	var variants []variant
	seenP, seenV := map[string]bool{}, map[string]bool{}
	for i := range all {
		ro := &all[i]
		runs, err := runfile.Read(filepath.Join(dir, fmt.Sprintf("%s-%s-%d.json", ro.Plan, ro.Variant, ro.Round)))
		if err != nil {
			return err
		}
		ro.Cases = nil
		for _, r := range runs {
			ro.Cases = append(ro.Cases, outcomes(r, target)...)
		}
		if !seenP[ro.Plan] {
			seenP[ro.Plan] = true
			planNames = append(planNames, ro.Plan)
		}
		if !seenV[ro.Variant] {
			seenV[ro.Variant] = true
			variants = append(variants, variant{name: ro.Variant})
		}
	}
	printTable(all, planNames, variants, target)
	printSteady(all, planNames)
	return nil
}

// printSteady prints, per plan and profile over every run, how the first interval of a sample
// compares with the rest: the median and the 10th–90th percentile range of the difference,
// the median noise, and how many samples were flagged as ramp-ups.
func printSteady(all []runOutcome, planNames []string) {
	fmt.Println()
	fmt.Println("| plan | profile | samples | first interval vs the rest: median (10th–90th pct) | first interval slower (sign test) | noise (median) | ramp-ups flagged |")
	fmt.Println("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
	for _, pn := range planNames {
		var profiles []string
		first, noise := map[string][]float64{}, map[string][]float64{}
		ramps := map[string]int{}
		for _, ro := range all {
			if ro.Plan != pn {
				continue
			}
			for _, c := range ro.Cases {
				if _, ok := first[c.Profile]; !ok {
					profiles = append(profiles, c.Profile)
					first[c.Profile] = nil
				}
				first[c.Profile] = append(first[c.Profile], c.FirstIntervalPercents...)
				noise[c.Profile] = append(noise[c.Profile], c.NoisePercents...)
				ramps[c.Profile] += c.RampUps
			}
		}
		for _, p := range profiles {
			xs := first[p]
			if len(xs) == 0 {
				continue
			}
			slower := 0
			for _, x := range xs {
				if x < 0 {
					slower++
				}
			}
			fmt.Printf("| %s | %s | %d | %+.1f%% (%+.1f%% to %+.1f%%) | %d of %d, p %.3f | ±%.1f%% | %d (%.0f%%) |\n", pn, p, len(xs), median(xs),
				quantile(xs, 0.1), quantile(xs, 0.9), slower, len(xs), signTest(slower, len(xs)), median(noise[p]), ramps[p],
				100*float64(ramps[p])/float64(len(xs)))
		}
	}
}

// signTest is the exact two-sided binomial p-value of k successes in n trials at one half: is
// the first interval slower than the rest more (or less) often than chance would make it?
func signTest(k, n int) float64 {
	pmf := func(i int) float64 {
		a, _ := math.Lgamma(float64(n + 1))
		b, _ := math.Lgamma(float64(i + 1))
		c, _ := math.Lgamma(float64(n - i + 1))
		return math.Exp(a - b - c - float64(n)*math.Ln2)
	}
	lo := min(k, n-k)
	var tail float64
	for i := 0; i <= lo; i++ {
		tail += pmf(i)
	}
	return math.Min(1, 2*tail)
}

func quantile(xs []float64, q float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 0 {
		return math.NaN()
	}
	pos := q * float64(len(s)-1)
	lo := int(pos)
	if lo+1 >= len(s) {
		return s[lo]
	}
	return s[lo] + (pos-float64(lo))*(s[lo+1]-s[lo])
}

func within(cs []caseOutcome) int {
	n := 0
	for _, c := range cs {
		if c.Within {
			n++
		}
	}
	return n
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 0 {
		return math.NaN()
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// printTable prints one Markdown row per plan and variant: runs, median wall time, cases and
// samples, the share within target and within-target cases per minute of wall time (totals
// over all rounds), and the median of the cases' half-widths.
func printTable(all []runOutcome, planNames []string, variants []variant, target float64) {
	fmt.Printf("| plan | variant | runs | wall time (median) | samples per case (mean) | cases within ±%g%% at 95%% | within-target cases per minute | CI half-width (median of cases) |\n", target)
	fmt.Println("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, pn := range planNames {
		for _, v := range variants {
			var walls, widths []float64
			var cases, in, samples int
			var total float64
			for _, ro := range all {
				if ro.Plan != pn || ro.Variant != v.name {
					continue
				}
				walls = append(walls, ro.WallSeconds)
				total += ro.WallSeconds
				for _, c := range ro.Cases {
					cases++
					samples += c.Samples
					if c.Within {
						in++
					}
					if c.HalfWidthPercent != nil {
						widths = append(widths, *c.HalfWidthPercent)
					}
				}
			}
			if len(walls) == 0 || cases == 0 {
				continue
			}
			fmt.Printf("| %s | %s | %d | %.0f s | %.1f | %d/%d (%.0f%%) | %.2f | ±%.1f%% |\n", pn, v.name, len(walls), median(walls),
				float64(samples)/float64(cases), in, cases, 100*float64(in)/float64(cases), float64(in)/(total/60), median(widths))
		}
	}
}
