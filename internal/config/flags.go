package config

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/plan"
)

// Flag names, without the dashes, as FlagValues, ApplyOverrides' set func and error
// messages use them.
const (
	FlagProfile      = "profile"
	FlagDriver       = "driver"
	FlagPath         = "path"
	FlagDuration     = "duration"
	FlagWarmup       = "warmup"
	FlagSamples      = "samples"
	FlagMessageSize  = "message-size"
	FlagResponseSize = "response-size"
	FlagParallel     = "parallel"
	FlagBurst        = "burst"
	FlagRate         = "rate"
	FlagTimeout      = "timeout"
	FlagIPFamily     = "ip-family"
	FlagNetwork      = "network"
	FlagOption       = "option"
	FlagConfidence   = "confidence"
	FlagExclude      = "exclude-outliers"
)

// FlagValues are the plan flags of `cnperf run` as typed. Lists are comma-separated. An empty
// value means "not given" to FromFlags; ApplyOverrides uses its set func instead.
type FlagValues struct {
	Profile      string   // --profile TCP_STREAM,TCP_RR (case-insensitive)
	Driver       string   // --driver native,iperf3
	Path         string   // --path loopback
	Duration     string   // --duration 10s (or a number of seconds)
	Warmup       string   // --warmup 0s
	Samples      string   // --samples 3, or MIN,MAX with --confidence: --samples 3,30
	Confidence   string   // --confidence 95,5 (level %, half-width % of the mean)
	Exclude      bool     // --exclude-outliers
	MessageSize  string   // --message-size 1024,64k (k/M are binary: 64k = 65536)
	ResponseSize string   // --response-size 1 (RR profiles)
	Parallel     string   // --parallel 1,4
	Burst        string   // --burst 0,8 (RR profiles)
	Rate         string   // --rate 1G (bits/s; k, M, G, T decimal)
	Timeout      string   // --timeout 1m (per sample)
	IPFamily     string   // --ip-family ipv4|ipv6|dual
	Network      string   // --network NAMESPACE/NAME (a Multus NetworkAttachmentDefinition)
	Options      []string // --option key=value (repeatable)
}

// FlagError is a bad flag value; its message names the flag: --duration: "abc" is not a duration.
type FlagError struct {
	Flag    string
	Message string
}

func (e *FlagError) Error() string {
	if e.Flag == "" {
		return e.Message
	}
	return "--" + e.Flag + ": " + e.Message
}

// FlagErrors is every bad flag value, one per line.
type FlagErrors struct{ Errors []*FlagError }

func (e *FlagErrors) Error() string {
	s := make([]string, len(e.Errors))
	for i, fe := range e.Errors {
		s[i] = fe.Error()
	}
	return strings.Join(s, "\n")
}

type flagParser struct{ errs FlagErrors }

func (f *flagParser) fail(flag, format string, a ...any) {
	f.errs.Errors = append(f.errs.Errors, &FlagError{Flag: flag, Message: fmt.Sprintf(format, a...)})
}

func (f *flagParser) err() error {
	if len(f.errs.Errors) == 0 {
		return nil
	}
	return &f.errs
}

// split splits a comma-separated list, refusing empty elements.
func (f *flagParser) split(flag, v string) ([]string, bool) {
	parts := strings.Split(v, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
		if parts[i] == "" {
			f.fail(flag, "empty element in %q", v)
			return nil, false
		}
	}
	return parts, true
}

func (f *flagParser) profiles(v string) []api.Profile {
	return parseNames(f, FlagProfile, "profile", v, strings.ToUpper, api.Profiles)
}

func (f *flagParser) paths(v string) []api.Path {
	return parseNames(f, FlagPath, "path", v, strings.ToLower, api.Paths)
}

// parseNames reads a comma-separated flag of registered names (profiles, paths), normalized
// (case); an unknown name fails the flag with a did-you-mean.
func parseNames[T interface {
	~string
	Valid() bool
}](f *flagParser, flag, what, v string, norm func(string) string, known []T) []T {
	parts, ok := f.split(flag, v)
	if !ok {
		return nil
	}
	var out []T
	for _, s := range parts {
		p := T(norm(s))
		if !p.Valid() {
			f.fail(flag, "%s", plan.Unknown(what, s, p, known))
			continue
		}
		out = append(out, p)
	}
	return out
}

func (f *flagParser) drivers(v string) []string {
	parts, ok := f.split(FlagDriver, v)
	if !ok {
		return nil
	}
	for i := range parts {
		parts[i] = strings.ToLower(parts[i])
	}
	return parts
}

func (f *flagParser) ints(flag, v string, size bool) []int {
	parts, ok := f.split(flag, v)
	if !ok {
		return nil
	}
	var out []int
	for _, s := range parts {
		n, ok := f.int(flag, s, size)
		if ok {
			out = append(out, n)
		}
	}
	return out
}

func (f *flagParser) int(flag, s string, size bool) (int, bool) {
	if size {
		n, err := plan.ParseSize(s)
		if err != nil {
			f.fail(flag, "%v", err)
			return 0, false
		}
		return n, true
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		f.fail(flag, "%q is not an integer", s)
		return 0, false
	}
	return n, true
}

// samples parses --samples N (a fixed count, or the least with --confidence) or MIN,MAX.
func (f *flagParser) samples(v string) (minN, maxN *int) {
	parts, ok := f.split(FlagSamples, v)
	if !ok {
		return nil, nil
	}
	if len(parts) > 2 {
		f.fail(FlagSamples, "%q: want N or MIN,MAX (e.g. 3,30)", v)
		return nil, nil
	}
	lo, ok := f.int(FlagSamples, parts[0], false)
	if !ok {
		return nil, nil
	}
	if len(parts) == 1 {
		return &lo, nil
	}
	hi, ok := f.int(FlagSamples, parts[1], false)
	if !ok {
		return nil, nil
	}
	return &lo, &hi
}

// confidence parses --confidence LEVEL,HALFWIDTH: percentages, e.g. 95,5 for a 95 %
// interval within ±5 % of the mean. Ranges are checked by the plan's validation.
func (f *flagParser) confidence(v string) *api.ConfidenceTarget {
	parts, ok := f.split(FlagConfidence, v)
	if !ok {
		return nil
	}
	if len(parts) != 2 {
		f.fail(FlagConfidence, "%q: want LEVEL,HALFWIDTH in percent, e.g. 95,5 (a 95%% interval within ±5%% of the mean)", v)
		return nil
	}
	var t api.ConfidenceTarget
	for i, dst := range []*float64{&t.Level, &t.HalfWidthPercent} {
		x, err := strconv.ParseFloat(strings.TrimSuffix(parts[i], "%"), 64)
		if err != nil {
			f.fail(FlagConfidence, "%q is not a number (want LEVEL,HALFWIDTH in percent, e.g. 95,5)", parts[i])
			return nil
		}
		*dst = x
	}
	return &t
}

func (f *flagParser) duration(flag, v string) string {
	// A duration too long to represent is left to the plan's validation, which says how long
	// the field may be.
	if _, err := plan.ParseDuration(v); err != nil && !errors.Is(err, plan.ErrDurationOverflow) {
		f.fail(flag, "%v", err)
	}
	return strings.TrimSpace(v)
}

func (f *flagParser) rate(v string) string {
	if strings.TrimSpace(v) == "" {
		return ""
	}
	if _, err := plan.ParseRate(v); err != nil {
		f.fail(FlagRate, "%v", err)
	}
	return strings.TrimSpace(v)
}

func (f *flagParser) options(vals []string) map[string]string {
	if len(vals) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, kv := range vals {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			f.fail(FlagOption, "%q is not key=value", kv)
			continue
		}
		out[strings.TrimSpace(k)] = v
	}
	return out
}

// FromFlags builds a one-group plan from flags. Unset flags leave the field to the built-in
// defaults; with no --profile the plan runs plan.DefaultProfiles. Syntax errors name the flag;
// range errors found later by plan.ExpandWith are renamed to flags by AnnotateFlagErrors.
func FromFlags(fv FlagValues) (*api.Plan, error) {
	var g api.TestGroup
	f := &flagParser{}
	f.apply(&g, fv, func(name string) bool { return flagValue(fv, name) != "" })
	if len(g.Profiles) == 0 && strings.TrimSpace(fv.Profile) == "" {
		g.Profiles = append([]api.Profile(nil), plan.DefaultProfiles...)
	}
	if err := f.err(); err != nil {
		return nil, err
	}
	return &api.Plan{APIVersion: api.APIVersion, Kind: api.KindPlan, Tests: []api.TestGroup{g}}, nil
}

// Sampling is how many samples each case takes, as --samples and --confidence give it.
type Sampling struct {
	Samples    int                   // a fixed count, or with Confidence the least
	MaxSamples int                   // with Confidence the most; 0 without
	Confidence *api.ConfidenceTarget // nil: no target
}

// ParseSampling parses --samples N|MIN,MAX and --confidence LEVEL,HALFWIDTH exactly as `cnperf
// run` takes them, for commands that build their cases without a plan (mesh): the same parser
// and, through plan.ExpandWith on a one-case plan, the same range checks and defaults
// (samples 1..limits.MaxSamples, a level from 50 to below 100, a half-width above 0 and at
// most 100, MIN ≤ MAX and MIN,MAX only with --confidence, which alone means 3,30). An empty
// value is a flag not given; without either flag a case takes defaultSamples. Every error
// names its flag (*FlagErrors).
func ParseSampling(samples, confidence string, defaultSamples int) (Sampling, error) {
	fv := FlagValues{Samples: samples, Confidence: confidence}
	var g api.TestGroup
	f := &flagParser{}
	f.apply(&g, fv, func(name string) bool {
		return (name == FlagSamples || name == FlagConfidence) && flagValue(fv, name) != ""
	})
	if err := f.err(); err != nil {
		return Sampling{}, err
	}
	if g.Samples == nil && g.Confidence == nil {
		n := defaultSamples
		g.Samples = &n
	}
	g.Profiles = []api.Profile{api.TCPStream}
	p := &api.Plan{APIVersion: api.APIVersion, Kind: api.KindPlan, Tests: []api.TestGroup{g}}
	cases, err := plan.ExpandWith(p, plan.Options{}, nil)
	if err != nil {
		return Sampling{}, AnnotateFlagErrors(err)
	}
	c := cases[0].Params
	return Sampling{Samples: c.Samples, MaxSamples: c.MaxSamples, Confidence: c.Confidence}, nil
}

// ApplyOverrides sets, in every group of p and in its defaults, the fields whose flags the
// user gave explicitly (set reports that, e.g. cobra's Flags().Changed). A flag replaces the
// field's whole list: --profile TCP_RR on a plan runs TCP_RR wherever the plan had profiles.
func ApplyOverrides(p *api.Plan, fv FlagValues, set func(name string) bool) error {
	if p == nil {
		return errors.New("no plan to override")
	}
	f := &flagParser{}
	// Check once, so a bad value is reported once.
	f.apply(&api.TestGroup{}, fv, set)
	if err := f.err(); err != nil {
		return err
	}
	if p.Defaults == nil {
		p.Defaults = &api.TestGroup{}
	}
	groups := []*api.TestGroup{p.Defaults}
	for i := range p.Tests {
		groups = append(groups, &p.Tests[i])
	}
	for _, g := range groups {
		// the values are valid now: each group gets them parsed afresh (its own copies)
		(&flagParser{}).apply(g, fv, set)
	}
	return nil
}

// apply parses the flags that are set into g: each replaces its field (a whole list), but
// --option adds to g's options.
func (f *flagParser) apply(g *api.TestGroup, fv FlagValues, set func(string) bool) {
	if set(FlagProfile) {
		g.Profiles = f.profiles(fv.Profile)
	}
	if set(FlagDriver) {
		g.Drivers = f.drivers(fv.Driver)
	}
	if set(FlagPath) {
		g.Paths = f.paths(fv.Path)
	}
	if set(FlagDuration) {
		g.Duration = f.duration(FlagDuration, fv.Duration)
	}
	if set(FlagWarmup) {
		g.Warmup = f.duration(FlagWarmup, fv.Warmup)
	}
	if set(FlagTimeout) {
		g.Timeout = f.duration(FlagTimeout, fv.Timeout)
	}
	if set(FlagSamples) {
		g.Samples, g.MaxSamples = f.samples(fv.Samples)
	}
	if set(FlagConfidence) {
		g.Confidence = f.confidence(fv.Confidence)
	}
	if set(FlagExclude) {
		v := fv.Exclude
		g.ExcludeOutliers = &v
	}
	if set(FlagMessageSize) {
		g.MessageSizes = f.ints(FlagMessageSize, fv.MessageSize, true)
	}
	if set(FlagResponseSize) {
		if n, ok := f.int(FlagResponseSize, fv.ResponseSize, true); ok {
			g.ResponseSize = &n
		}
	}
	if set(FlagParallel) {
		g.Parallel = f.ints(FlagParallel, fv.Parallel, false)
	}
	if set(FlagBurst) {
		g.Burst = f.ints(FlagBurst, fv.Burst, false)
	}
	if set(FlagRate) {
		g.Rate = f.rate(fv.Rate)
	}
	if set(FlagIPFamily) {
		g.IPFamily = strings.ToLower(strings.TrimSpace(fv.IPFamily))
	}
	if set(FlagNetwork) {
		g.Network = strings.TrimSpace(fv.Network)
		if err := plan.CheckNetwork(g.Network); err != nil {
			f.fail(FlagNetwork, "%v", err)
		}
	}
	if set(FlagOption) {
		// added to the group's own options (a plan's), a key given again replaced
		for k, v := range f.options(fv.Options) {
			if g.Options == nil {
				g.Options = map[string]string{}
			}
			g.Options[k] = v
		}
	}
}

func flagValue(fv FlagValues, name string) string {
	switch name {
	case FlagProfile:
		return fv.Profile
	case FlagDriver:
		return fv.Driver
	case FlagPath:
		return fv.Path
	case FlagDuration:
		return fv.Duration
	case FlagWarmup:
		return fv.Warmup
	case FlagSamples:
		return fv.Samples
	case FlagMessageSize:
		return fv.MessageSize
	case FlagResponseSize:
		return fv.ResponseSize
	case FlagParallel:
		return fv.Parallel
	case FlagBurst:
		return fv.Burst
	case FlagRate:
		return fv.Rate
	case FlagTimeout:
		return fv.Timeout
	case FlagIPFamily:
		return fv.IPFamily
	case FlagNetwork:
		return fv.Network
	case FlagOption:
		return strings.Join(fv.Options, ",")
	case FlagConfidence:
		return fv.Confidence
	case FlagExclude:
		if fv.Exclude {
			return "true"
		}
	}
	return ""
}

// planFieldFlags maps a plan group field to the flag that sets it.
var planFieldFlags = map[string]string{
	"profiles": FlagProfile, "drivers": FlagDriver, "paths": FlagPath, "duration": FlagDuration,
	"warmup": FlagWarmup, "samples": FlagSamples, "messageSizes": FlagMessageSize,
	"responseSize": FlagResponseSize, "parallel": FlagParallel, "burst": FlagBurst, "rate": FlagRate,
	"timeout": FlagTimeout, "ipFamily": FlagIPFamily, "network": FlagNetwork, "options": FlagOption,
	"maxSamples": FlagSamples, "confidence": FlagConfidence, "excludeOutliers": FlagExclude,
}

var groupField = regexp.MustCompile(`^(?:tests\[\d+\]|defaults)\.([A-Za-z]+)`)

// AnnotateFlagErrors renames the field paths of a *plan.FieldErrors about a plan made by
// FromFlags to the flags that set them: "tests[0].profiles[0]: driver ..." becomes
// "--profile: driver ...". A problem with no flag (a built-in default) keeps no prefix. Other
// errors are returned unchanged.
func AnnotateFlagErrors(err error) error {
	var fe *plan.FieldErrors
	if !errors.As(err, &fe) {
		return err
	}
	out := &FlagErrors{}
	for _, e := range fe.Errors {
		flag := ""
		if m := groupField.FindStringSubmatch(e.Path); m != nil {
			flag = planFieldFlags[m[1]]
		}
		out.Errors = append(out.Errors, &FlagError{Flag: flag, Message: e.Message})
	}
	return out
}
