package runcmd

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/config"
	"github.com/cnperf/cnperf/internal/driver/all"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/plan"
)

// buildPlan returns the plan from -c and/or flags, or the default suite when neither says
// what to run. defaultSuite reports the latter.
func (o *Options) buildPlan(fs *pflag.FlagSet) (p *api.Plan, loaded *config.Loaded, defaultSuite bool, err error) {
	set := func(name string) bool { f := fs.Lookup(name); return f != nil && f.Changed }
	if err := emptyPlanFlags(fs); err != nil {
		return nil, nil, false, err
	}
	if o.ConfigFile != "" {
		if err := o.loadPlanFile(); err != nil {
			return nil, nil, false, err
		}
		loaded = o.loaded
		if err := config.ApplyOverrides(loaded.Plan, o.Flags, set); err != nil {
			return nil, nil, false, &exit.UsageError{Err: err}
		}
		return loaded.Plan, loaded, false, nil
	}
	if !anyPlanFlagSet(set) {
		return DefaultSuite(), nil, true, nil
	}
	p, err = config.FromFlags(o.Flags)
	if err != nil {
		return nil, nil, false, &exit.UsageError{Err: err}
	}
	return p, nil, false, nil
}

// loadPlanFile reads the plan file (-c) once, into o.loaded; without -c it does nothing.
func (o *Options) loadPlanFile() error {
	if o.ConfigFile == "" || o.loaded != nil {
		return nil
	}
	var err error
	if o.ConfigFile == "-" { // standard input, as cnperf report - reads it
		o.loaded, err = config.LoadReader("<stdin>", o.stdin)
	} else {
		o.loaded, err = config.Load(o.ConfigFile)
	}
	if err != nil {
		return &exit.UsageError{Err: err}
	}
	return nil
}

// DefaultSuite is what `cnperf run` measures when told nothing: the five main profiles with
// the built-in generator on the platform's default path (loopback on this host,
// pod-pod-cross-node on a cluster named by --kubeconfig or --context), 1 s samples until the 95 % confidence interval of each
// case's headline figure is within ±5 %, 3 to 8 samples (15 to 40 s of traffic in all). On a
// loaded 2-CPU machine this gave narrower intervals than the former 2 s × 3 samples in about
// the same time (docs/performance.md, "Time to a trustworthy answer").
func DefaultSuite() *api.Plan {
	minN, maxN := DefaultSuiteSamples[0], DefaultSuiteSamples[1]
	return &api.Plan{
		APIVersion: api.APIVersion, Kind: api.KindPlan,
		Metadata: api.PlanMetadata{Name: "default-local-suite"},
		Tests: []api.TestGroup{{
			Name:       "default",
			Profiles:   DefaultSuiteProfiles,
			Drivers:    []string{plan.DefaultDriver},
			Duration:   "1s",
			Samples:    &minN,
			MaxSamples: &maxN,
			Confidence: &api.ConfidenceTarget{Level: 95, HalfWidthPercent: 5},
		}},
	}
}

// DefaultSuiteSamples are the least and the most samples per case of the default suite.
var DefaultSuiteSamples = [2]int{3, 8}

var planFlags = []string{config.FlagProfile, config.FlagDriver, config.FlagPath, config.FlagDuration, config.FlagWarmup,
	config.FlagSamples, config.FlagMessageSize, config.FlagResponseSize, config.FlagParallel, config.FlagBurst,
	config.FlagRate, config.FlagTimeout, config.FlagIPFamily, config.FlagNetwork, config.FlagOption, config.FlagConfidence, config.FlagExclude}

// emptyPlanFlags refuses a plan flag given with an empty value (--profile ”): it would
// otherwise mean "not given" and silently run the defaults.
func emptyPlanFlags(fs *pflag.FlagSet) error {
	for _, name := range planFlags {
		f := fs.Lookup(name)
		if f != nil && f.Changed && f.Value.Type() == "string" && strings.TrimSpace(f.Value.String()) == "" {
			return exit.Usage("--%s: empty value; give one or leave the flag out for the default", name)
		}
	}
	return nil
}

func anyPlanFlagSet(set func(string) bool) bool {
	for _, f := range planFlags {
		if set(f) {
			return true
		}
	}
	return false
}

// addPlanFlags registers the flags that describe a plan (or override a loaded one).
func addPlanFlags(fs *pflag.FlagSet, f *config.FlagValues) {
	fs.StringVar(&f.Profile, config.FlagProfile, "", "profiles, comma-separated: "+profileList())
	fs.StringVar(&f.Driver, config.FlagDriver, "", "drivers, comma-separated: "+all.Joined()+" (default "+plan.DefaultDriver+")")
	fs.StringVar(&f.Path, config.FlagPath, "", "paths, comma-separated (default loopback locally, pod-pod-cross-node on a cluster)")
	fs.StringVar(&f.Duration, config.FlagDuration, "", "measured time of one sample, e.g. 10s (default 10s)")
	fs.StringVar(&f.Warmup, config.FlagWarmup, "", "warm-up before the first sample, excluded from results (default 0s; native: 0.2s before each sample's window)")
	fs.StringVar(&f.Samples, config.FlagSamples, "", "samples per case (default 3); with --confidence MIN,MAX (default 3,30)")
	fs.StringVar(&f.Confidence, config.FlagConfidence, "", "LEVEL,HALFWIDTH: take samples until the LEVEL% confidence interval of each case's headline figure is within ±HALFWIDTH% of its mean, e.g. 95,5 (default off)")
	fs.BoolVar(&f.Exclude, config.FlagExclude, false, "leave samples outside median ± 3·MAD out of the summary (kept in the result, marked excluded)")
	fs.StringVar(&f.MessageSize, config.FlagMessageSize, "", "message sizes in bytes, comma-separated, k/M binary suffixes (default per profile)")
	fs.StringVar(&f.ResponseSize, config.FlagResponseSize, "", "RR response size in bytes (default: the message size)")
	fs.StringVar(&f.Parallel, config.FlagParallel, "", "parallel flows, comma-separated (default 1)")
	fs.StringVar(&f.Burst, config.FlagBurst, "", "extra RR transactions in flight, comma-separated (default 0)")
	fs.StringVar(&f.Rate, config.FlagRate, "", "target send rate in bits/s, k/M/G suffixes (default unlimited)")
	fs.StringVar(&f.Timeout, config.FlagTimeout, "", "timeout of one sample (default duration + warm-up + 30s)")
	fs.StringVar(&f.IPFamily, config.FlagIPFamily, "", "ipv4, ipv6 or dual (every case on both); default: the primary family of the pods (kube), ipv4 (local)")
	fs.StringVar(&f.Network, config.FlagNetwork, "", "NAMESPACE/NAME: put the pod-to-pod paths' pods on this secondary network (a Multus NetworkAttachmentDefinition) and measure over it")
	fs.StringArrayVar(&f.Options, config.FlagOption, nil, "driver option KEY=VALUE (repeatable), e.g. --option zerocopy=true")
}

func profileList() string {
	s := make([]string, len(api.Profiles))
	for i, p := range api.Profiles {
		s[i] = string(p)
	}
	return fmt.Sprint(s)
}
