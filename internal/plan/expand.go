package plan

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/limits"
)

// Options tune expansion for the caller's platform and command line. The zero value uses the
// built-in defaults.
type Options struct {
	// DefaultPaths replace the built-in [loopback] for groups that set no paths (neither the
	// group nor the plan's defaults). A platform passes its own default here; an empty element
	// means "the platform decides" and comes out as Case.Path "" (used for k8s-netperf files,
	// which name no path).
	DefaultPaths []api.Path
	// DefaultDrivers replace the built-in [native] for groups that set no drivers.
	DefaultDrivers []string
	// DriverMessageSize, when set, gives a driver's own default message size for a profile
	// (ok false: use DefaultMessageSize), for tools whose limits the generic default breaks
	// (sockperf's 14-byte minimum and 65507-byte maximum).
	DriverMessageSize func(driver string, p api.Profile) (size int, ok bool)
	// SkipUnsupported, when set, is asked about every case whose driver cannot run its
	// profile (check blames the profile): true drops the case instead of refusing the plan.
	// path is the profile's field. Peer formats use it to skip what their tool skips
	// (k8s-netperf: "Test TCP_RR is not supported with driver iperf3. Skipping.").
	SkipUnsupported func(c Case, path string, err error) bool
	// DriverWarmup, when set, gives a driver's own default warm-up in seconds (ok false: the
	// built-in 0), for cases whose group and defaults set no warmup.
	DriverWarmup func(driver string) (seconds float64, ok bool)
	// AllowShortSamples lets a sample's duration be shorter than limits.MinDuration.
	AllowShortSamples bool
	// NetworkDirectOnly puts a secondary network (`network`) on the cases that reach a pod
	// directly only: a `service: true` or `hostNetwork: true` case stays on the cluster's own
	// network, without it, instead of being refused (k8s-netperf's --bridge and --macvlan:
	// executeWorkload dials a Service's ClusterIP before the attachment's address, and names no
	// network for that case).
	NetworkDirectOnly bool
}

// Expand validates p and expands it into the ordered list of cases, with the built-in
// defaults. See ExpandWith.
func Expand(p *api.Plan, check func(Case) error) ([]Case, error) {
	return ExpandWith(p, Options{}, check)
}

// Validate reports every problem in p as a *FieldErrors, or nil. check may be nil, which
// skips the driver checks (used when no driver registry is at hand, e.g. while loading).
func Validate(p *api.Plan, opts Options, check func(Case) error) error {
	_, err := ExpandWith(p, opts, check)
	return err
}

// ExpandWith validates p and expands it into the ordered list of cases.
//
// Order is file order: groups in order, then for each group profiles × paths × drivers ×
// messageSizes × parallel × burst, each list in the order written (the last varies fastest).
// A field a group does not set comes from the plan's defaults, then from Options, then from
// the built-in defaults (see DefaultDurationSeconds and its table). Burst and responseSize
// apply to request/response profiles only: stream cases get burst 0 and no response size.
//
// check (internal/driver/all.Check in production; nil skips it) is called for every case; its message is
// attached to the field that makes the case impossible (the profile, the driver, parallel,
// burst, rate or responseSize). Every problem is returned at once as a *FieldErrors whose
// paths use the plan's YAML names ("tests[1].profiles[0]"); no case is returned then.
func ExpandWith(p *api.Plan, opts Options, check func(Case) error) ([]Case, error) {
	x := &expander{check: check, opts: opts}
	if p == nil {
		x.errs.Add("", "empty plan")
		return nil, x.errs.Err()
	}
	if p.APIVersion != "" && p.APIVersion != api.APIVersion {
		x.errs.Add("apiVersion", "unsupported apiVersion %q (want %q)", p.APIVersion, api.APIVersion)
	}
	if p.Kind != "" && p.Kind != api.KindPlan {
		x.errs.Add("kind", "unsupported kind %q (want %q)", p.Kind, api.KindPlan)
	}
	x.builtin = x.builtins(opts)
	var def group
	if p.Defaults != nil {
		if strings.TrimSpace(p.Defaults.Name) != "" {
			x.errs.Add("defaults.name", "defaults cannot have a name")
		}
		def = x.read(p.Defaults, "defaults")
	}
	if len(p.Tests) == 0 {
		x.errs.Add("tests", "the plan has no tests")
	}
	names := map[string]int{}
	for i := range p.Tests {
		g := &p.Tests[i]
		prefix := fmt.Sprintf("tests[%d]", i)
		name := strings.TrimSpace(g.Name)
		if name != "" {
			if j, dup := names[name]; dup {
				x.errs.Add(prefix+".name", "duplicate group name %q (also tests[%d])", name, j)
			} else {
				names[name] = i
			}
		}
		own := x.read(g, prefix)
		x.expandGroup(name, prefix, own, def)
	}
	if err := x.errs.Err(); err != nil {
		return nil, err
	}
	return x.cases, nil
}

type item[T any] struct {
	v    T
	path string // the field it came from; the group's path for a built-in default
}

// list is a list field of one group: set when written (non-empty), items the valid elements.
type list[T any] struct {
	set   bool
	items []item[T]
}

// one is a scalar field of one group: nil when not written; bad when written but invalid.
type one[T any] struct {
	item[T]
	bad bool
}

type group struct {
	profiles list[api.Profile]
	paths    list[api.Path]
	drivers  list[string]
	sizes    list[int]
	parallel list[int]
	burst    list[int]
	respSize *one[int]
	duration *one[float64]
	warmup   *one[float64]
	timeout  *one[float64]
	rate     *one[float64]
	samples  *one[int]
	maxSmp   *one[int]
	conf     *one[api.ConfidenceTarget]
	exclude  *one[bool]
	hostNet  *one[bool]
	service  *one[bool]
	ipFamily *one[string]
	network  *one[string]
	options  map[string]string
}

type builtins struct {
	paths   []api.Path
	drivers []string
}

type expander struct {
	opts    Options
	check   func(Case) error
	errs    FieldErrors
	cases   []Case
	builtin builtins
	tooMany bool
}

func (x *expander) builtins(opts Options) builtins {
	b := builtins{paths: []api.Path{DefaultPath}, drivers: []string{DefaultDriver}}
	if len(opts.DefaultPaths) > 0 {
		b.paths = nil
		for _, p := range opts.DefaultPaths {
			p = api.Path(strings.ToLower(strings.TrimSpace(string(p))))
			if p != "" && !p.Valid() {
				x.errs.Add("", "unknown default path %q (known: %s)", p, Join(api.Paths))
				continue
			}
			b.paths = append(b.paths, p)
		}
	}
	if len(opts.DefaultDrivers) > 0 {
		b.drivers = nil
		for _, d := range opts.DefaultDrivers {
			if d = strings.ToLower(strings.TrimSpace(d)); d != "" {
				b.drivers = append(b.drivers, d)
			}
		}
		if len(b.drivers) == 0 {
			b.drivers = []string{DefaultDriver}
		}
	}
	return b
}

// readNames reads a list field of registered names (profiles, paths): each trimmed, normalized
// (case), known and written once; what is wrong is an error at the element's path.
func readNames[T interface {
	~string
	Valid() bool
}](x *expander, raw, known []T, norm func(string) string, field, what string, idx func(string, int) string) list[T] {
	l := list[T]{set: len(raw) > 0}
	seen := map[T]int{}
	for i, r := range raw {
		v := T(norm(strings.TrimSpace(string(r))))
		switch {
		case v == "":
			x.errs.Add(idx(field, i), "empty %s (known: %s)", what, Join(known))
		case !v.Valid():
			x.errs.Add(idx(field, i), "%s", Unknown(what, string(r), v, known))
		default:
			if j, dup := seen[v]; dup {
				x.errs.Add(idx(field, i), "duplicate %s %s (also %s[%d])", what, v, field, j)
				continue
			}
			seen[v] = i
			l.items = append(l.items, item[T]{v, idx(field, i)})
		}
	}
	return l
}

// intOne reads an optional int field at path, which must be within [lo, hi].
func (x *expander) intOne(p *int, path, name string, lo, hi int) *one[int] {
	if p == nil {
		return nil
	}
	o := &one[int]{item: item[int]{*p, path}}
	if msg := intRange(name, *p, lo, hi); msg != "" {
		x.errs.Add(path, "%s", msg)
		o.bad = true
	}
	return o
}

// read parses and checks the fields one group (or the defaults) writes itself.
func (x *expander) read(g *api.TestGroup, prefix string) group {
	var r group
	at := func(field string) string { return prefix + "." + field }
	idx := func(field string, i int) string { return fmt.Sprintf("%s.%s[%d]", prefix, field, i) }

	r.profiles = readNames(x, g.Profiles, api.Profiles, strings.ToUpper, "profiles", "profile", idx)
	r.paths = readNames(x, g.Paths, api.Paths, strings.ToLower, "paths", "path", idx)
	r.drivers = x.readDrivers(g.Drivers, idx)

	r.sizes = x.intList(g.MessageSizes, prefix, "messageSizes", "message size", 1, MaxMessageSizeBytes)
	r.respSize = x.intOne(g.ResponseSize, at("responseSize"), "response size", 1, MaxMessageSizeBytes)
	r.parallel = x.intList(g.Parallel, prefix, "parallel", "parallel", 1, MaxParallel)
	r.burst = x.intList(g.Burst, prefix, "burst", "burst", 0, MaxBurst)

	r.duration = x.duration(g.Duration, at("duration"), "duration", false, limits.MaxDuration)
	if r.duration != nil && !r.duration.bad {
		x.checkShort(r.duration.v, r.duration.path, strings.TrimSpace(g.Duration))
	}
	r.warmup = x.duration(g.Warmup, at("warmup"), "warm-up", true, limits.MaxWarmup)
	r.samples = x.intOne(g.Samples, at("samples"), "samples", 1, MaxSamples)
	r.maxSmp = x.intOne(g.MaxSamples, at("maxSamples"), "maxSamples", 1, MaxSamples)
	r.conf = x.confidence(g.Confidence, at("confidence"))
	r.exclude = boolOne(g.ExcludeOutliers, at("excludeOutliers"))
	r.timeout = x.duration(g.Timeout, at("timeout"), "timeout", false, limits.MaxTimeout)
	r.rate = x.rate(g.Rate, at("rate"))
	r.hostNet = boolOne(g.HostNetwork, at("hostNetwork"))
	r.service = boolOne(g.Service, at("service"))
	r.ipFamily = x.ipFamily(g.IPFamily, at("ipFamily"))
	r.network = x.network(g.Network, at("network"))
	r.options = x.options(g.Options, at("options"))
	return r
}

// readDrivers reads the drivers field: each name trimmed, lower case and written once (whether
// it is a driver is the check's to say).
func (x *expander) readDrivers(raw []string, idx func(string, int) string) list[string] {
	l := list[string]{set: len(raw) > 0}
	seen := map[string]int{}
	for i, r := range raw {
		d := strings.ToLower(strings.TrimSpace(r))
		if d == "" {
			x.errs.Add(idx("drivers", i), "empty driver name")
			continue
		}
		if j, dup := seen[d]; dup {
			x.errs.Add(idx("drivers", i), "duplicate driver %s (also drivers[%d])", d, j)
			continue
		}
		seen[d] = i
		l.items = append(l.items, item[string]{d, idx("drivers", i)})
	}
	return l
}

// boolOne reads an optional bool field at path.
func boolOne(p *bool, path string) *one[bool] {
	if p == nil {
		return nil
	}
	return &one[bool]{item: item[bool]{*p, path}}
}

// confidence reads an optional confidence target at path: a level from 50 to below 100 and a
// half-width above 0 and at most 100 percent.
func (x *expander) confidence(p *api.ConfidenceTarget, path string) *one[api.ConfidenceTarget] {
	if p == nil {
		return nil
	}
	v := *p
	o := &one[api.ConfidenceTarget]{item: item[api.ConfidenceTarget]{v, path}}
	if !(v.Level >= 50 && v.Level < 100) {
		x.errs.Add(path+".level", "confidence level must be a percentage from 50 to below 100 (e.g. 95), got %g", v.Level)
		o.bad = true
	}
	if !(v.HalfWidthPercent > 0 && v.HalfWidthPercent <= 100) {
		x.errs.Add(path+".halfWidthPercent", "halfWidthPercent must be above 0 and at most 100 (e.g. 5 for ±5%%), got %g", v.HalfWidthPercent)
		o.bad = true
	}
	return o
}

// rate reads an optional send rate at path (ParseRate).
func (x *expander) rate(s, path string) *one[float64] {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	v, err := ParseRate(s)
	o := &one[float64]{item: item[float64]{v, path}}
	if err != nil {
		x.errs.Add(path, "%v", err)
		o.bad = true
	}
	return o
}

// ipFamily reads an optional IP family at path, one of IPFamilies in any case.
func (x *expander) ipFamily(s, path string) *one[string] {
	fam := strings.ToLower(strings.TrimSpace(s))
	if fam == "" {
		return nil
	}
	o := &one[string]{item: item[string]{fam, path}}
	if !slices.Contains(IPFamilies, fam) {
		x.errs.Add(path, "unknown ipFamily %q (known: %s)", s, strings.Join(IPFamilies, ", "))
		o.bad = true
	}
	return o
}

// network reads an optional secondary network at path (CheckNetwork).
func (x *expander) network(s, path string) *one[string] {
	n := strings.TrimSpace(s)
	if n == "" {
		return nil
	}
	o := &one[string]{item: item[string]{n, path}}
	if err := CheckNetwork(n); err != nil {
		x.errs.Add(path, "%v", err)
		o.bad = true
	}
	return o
}

// options reads the driver options at path: every name but an empty one, or nil when none
// is written.
func (x *expander) options(opts map[string]string, path string) map[string]string {
	if len(opts) == 0 {
		return nil
	}
	r := map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		if strings.TrimSpace(k) == "" {
			x.errs.Add(path, "empty option name")
			continue
		}
		r[k] = opts[k]
	}
	return r
}

func (x *expander) intList(vals []int, prefix, field, what string, lo, hi int) list[int] {
	l := list[int]{set: len(vals) > 0}
	seen := map[int]int{}
	for i, v := range vals {
		path := fmt.Sprintf("%s.%s[%d]", prefix, field, i)
		if msg := intRange(what, v, lo, hi); msg != "" {
			x.errs.Add(path, "%s", msg)
			continue
		}
		if j, dup := seen[v]; dup {
			x.errs.Add(path, "duplicate %s %d (also %s[%d])", what, v, field, j)
			continue
		}
		seen[v] = i
		l.items = append(l.items, item[int]{v, path})
	}
	return l
}

func intRange(what string, v, lo, hi int) string {
	unit := ""
	if strings.Contains(what, "size") {
		unit = " bytes"
	}
	switch {
	case v < lo && lo == 0:
		return fmt.Sprintf("%s must not be negative, got %d", what, v)
	case v < lo:
		return fmt.Sprintf("%s must be at least %d%s, got %d", what, lo, unit, v)
	case v > hi:
		return fmt.Sprintf("%s %d is larger than the limit of %d%s", what, v, hi, unit)
	}
	return ""
}

// checkShort refuses a sample duration below limits.MinDuration unless the options allow it.
func (x *expander) checkShort(seconds float64, path, shown string) {
	if x.opts.AllowShortSamples || seconds >= limits.MinDuration.Seconds() {
		return
	}
	// why (set-up and timers would dominate the sample) is the flag's help: this line fits 120 columns
	x.errs.Add(path, "%s is shorter than the %s a sample must last (--allow-short-samples allows it)", shown, limits.MinDuration)
}

func (x *expander) duration(s, path, what string, zeroOK bool, most time.Duration) *one[float64] {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	o := &one[float64]{item: item[float64]{path: path}}
	d, err := ParseDuration(s)
	switch {
	case errors.Is(err, ErrDurationOverflow) || (err == nil && d > most):
		x.errs.Add(path, "%s %s is too long (at most %s)", what, strings.TrimSpace(s), most)
		o.bad = true
	case err != nil:
		x.errs.Add(path, "%v", err)
		o.bad = true
	case d < 0 || (d == 0 && !zeroOK):
		if zeroOK {
			x.errs.Add(path, "%s must not be negative, got %s", what, strings.TrimSpace(s))
		} else {
			x.errs.Add(path, "%s must be positive, got %s", what, strings.TrimSpace(s))
		}
		o.bad = true
	default:
		o.v = d.Seconds()
	}
	return o
}

func pickList[T any](own, def list[T], builtin []item[T]) []item[T] {
	if own.set {
		return own.items
	}
	if def.set {
		return def.items
	}
	return builtin
}

func pickOne[T any](own, def *one[T], builtin T, groupPath string) one[T] {
	if own != nil {
		return *own
	}
	if def != nil {
		return *def
	}
	return one[T]{item: item[T]{builtin, groupPath}}
}

// settings are one group's fields resolved: its own, else the defaults', else the built-in
// ones (pickList, pickOne), each with the path it came from.
type settings struct {
	name, prefix      string
	profiles          []item[api.Profile]
	paths             []item[api.Path]
	families          []string
	drivers           []item[string]
	sizes             []item[int] // none: each driver's default for the profile
	parallel, burst   []item[int]
	respSize          *one[int]
	duration, warmup  one[float64]
	warmupSet         bool // the group or the defaults write a warm-up
	samples, maxSmp   one[int]
	exclude           one[bool]
	conf              *api.ConfidenceTarget
	rate              one[float64]
	hostNet, service  one[bool]
	ipFamily, network one[string]
	timeout           *one[float64]
	options           map[string]string
	optionsPath       string
}

// expandGroup adds the cases of one group: every profile × path × family × driver × message
// size × parallel × burst, each checked (checkCase).
func (x *expander) expandGroup(name, prefix string, own, def group) {
	s := x.settings(name, prefix, own, def)
	x.checkGroup(&s, own, def)
	if !x.room(&s) {
		return
	}
	for _, prof := range s.profiles {
		for _, path := range s.paths {
			for _, family := range s.families {
				for _, drv := range s.drivers {
					x.expandDriver(&s, axes{prof: prof, path: path, family: family, drv: drv})
				}
			}
		}
	}
}

// settings resolves a group's fields against the defaults and the built-in values.
func (x *expander) settings(name, prefix string, own, def group) settings {
	s := settings{name: name, prefix: prefix}
	s.profiles = pickList(own.profiles, def.profiles, nil)
	if !own.profiles.set && !def.profiles.set {
		x.errs.Add(prefix+".profiles", "no profiles: list at least one here or in defaults (known: %s)", Join(api.Profiles))
	}
	var bPaths []item[api.Path]
	for _, p := range x.builtin.paths {
		bPaths = append(bPaths, item[api.Path]{p, prefix})
	}
	var bDrivers []item[string]
	for _, d := range x.builtin.drivers {
		bDrivers = append(bDrivers, item[string]{d, prefix})
	}
	s.paths = pickList(own.paths, def.paths, bPaths)
	s.drivers = pickList(own.drivers, def.drivers, bDrivers)
	s.sizes = pickList(own.sizes, def.sizes, nil)
	s.parallel = pickList(own.parallel, def.parallel, []item[int]{{DefaultParallel, prefix}})
	s.burst = pickList(own.burst, def.burst, []item[int]{{DefaultBurst, prefix}})
	s.respSize = cmp.Or(own.respSize, def.respSize)
	s.duration = pickOne(own.duration, def.duration, DefaultDurationSeconds, prefix)
	s.warmup = pickOne(own.warmup, def.warmup, DefaultWarmupSeconds, prefix)
	s.warmupSet = own.warmup != nil || def.warmup != nil
	s.samples = pickOne(own.samples, def.samples, DefaultSamples, prefix)
	s.maxSmp = pickOne(own.maxSmp, def.maxSmp, 0, prefix)
	s.exclude = pickOne(own.exclude, def.exclude, false, prefix)
	if c := own.conf; c != nil && !c.bad {
		s.conf = &c.v
	} else if c == nil && def.conf != nil && !def.conf.bad {
		s.conf = &def.conf.v
	}
	s.rate = pickOne(own.rate, def.rate, 0, prefix)
	s.hostNet = pickOne(own.hostNet, def.hostNet, false, prefix)
	s.service = pickOne(own.service, def.service, false, prefix)
	s.ipFamily = pickOne(own.ipFamily, def.ipFamily, "", prefix)
	s.families = CaseFamilies(s.ipFamily.v)
	s.network = pickOne(own.network, def.network, "", prefix)
	s.timeout = cmp.Or(own.timeout, def.timeout)
	s.options, s.optionsPath = map[string]string{}, prefix+".options"
	maps.Copy(s.options, def.options)
	maps.Copy(s.options, own.options)
	if len(own.options) == 0 && len(def.options) > 0 {
		s.optionsPath = "defaults.options"
	}
	if len(s.options) == 0 {
		s.options = nil
	}
	return s
}

// checkGroup checks the fields of a group against each other: burst and a response size
// need a profile that uses them, maxSamples a confidence target (and then defaults to
// DefaultMaxSamples), a timeout must outlast the duration and warm-up.
func (x *expander) checkGroup(s *settings, own, def group) {
	anyRR := slices.ContainsFunc(s.profiles, func(p item[api.Profile]) bool { return p.v.IsRR() })
	if len(s.profiles) > 0 && !anyRR {
		if slices.ContainsFunc(own.burst.items, func(b item[int]) bool { return b.v > 0 }) {
			x.errs.Add(s.prefix+".burst", "burst applies only to request/response profiles (%s) and this group has none",
				Join(rrProfiles()))
		}
		latUnderLoad := slices.ContainsFunc(s.profiles, func(p item[api.Profile]) bool { return p.v == api.TCPStreamLat })
		if own.respSize != nil && !latUnderLoad {
			x.errs.Add(s.prefix+".responseSize", "responseSize applies only to request/response profiles (%s) and %s "+
				"(its small messages' size), and this group has none", Join(rrProfiles()), api.TCPStreamLat)
		}
	}
	switch {
	case own.conf == nil && def.conf == nil && s.maxSmp.v > 0:
		x.errs.Add(s.maxSmp.path, "maxSamples applies only with a confidence target (confidence: {level: 95, halfWidthPercent: 5})")
	case s.conf == nil:
	case s.maxSmp.v == 0:
		s.maxSmp.v = max(DefaultMaxSamples, s.samples.v)
	case !s.maxSmp.bad && !s.samples.bad && s.maxSmp.v < s.samples.v:
		x.errs.Add(s.maxSmp.path, "maxSamples %d is smaller than samples %d (the least a case takes)", s.maxSmp.v, s.samples.v)
	}
	if t := s.timeout; t != nil && !t.bad && !s.duration.bad && !s.warmup.bad {
		need := s.duration.v + s.warmup.v
		if t.v <= need {
			x.errs.Add(t.path, "timeout %s must be longer than duration + warm-up (%s)", secs(t.v), secs(need))
		}
	}
}

// room reports whether the group's cases fit in the plan (MaxCases), before any is built;
// the first group that does not fit is the error.
func (x *expander) room(s *settings) bool {
	nSizes := max(len(s.sizes), 1)
	n := len(s.profiles) * len(s.paths) * len(s.families) * len(s.drivers) * nSizes * len(s.parallel) * len(s.burst)
	if x.tooMany || len(x.cases)+n > MaxCases {
		if !x.tooMany {
			x.errs.Add(s.prefix, "the plan expands to more than %d cases", MaxCases)
		}
		x.tooMany = true
		return false
	}
	return true
}

// axes is one case's place in its group: a value of each list field, with its path.
type axes struct {
	prof             item[api.Profile]
	path             item[api.Path]
	family           string
	drv              item[string]
	size, par, burst item[int]
}

// expandDriver adds the cases of one profile, path, family and driver (a's first four): every
// message size (the group's, else the driver's default for the profile) × parallel × burst
// (only 0 for a profile without transactions).
func (x *expander) expandDriver(s *settings, a axes) {
	burst := s.burst
	if !a.prof.v.IsRR() {
		burst = []item[int]{{0, s.prefix}}
	}
	sizes := s.sizes
	if len(sizes) == 0 {
		def := DefaultMessageSize(a.prof.v)
		if x.opts.DriverMessageSize != nil {
			if n, ok := x.opts.DriverMessageSize(a.drv.v, a.prof.v); ok {
				def = n
			}
		}
		sizes = []item[int]{{def, s.prefix}}
	}
	for _, a.size = range sizes {
		for _, a.par = range s.parallel {
			for _, a.burst = range burst {
				x.addCase(s, a)
			}
		}
	}
}

// addCase builds the case at a of a group and adds it when it passes checkCase.
func (x *expander) addCase(s *settings, a axes) {
	c := Case{
		Index:   len(x.cases),
		Name:    s.name,
		Group:   s.name,
		Profile: a.prof.v,
		Path:    a.path.v,
		Driver:  a.drv.v,
		Params: api.Params{
			DurationSeconds:   s.duration.v,
			WarmupSeconds:     s.warmup.v,
			Samples:           s.samples.v,
			MaxSamples:        s.maxSmp.v,
			Confidence:        cloneTarget(s.conf),
			ExcludeOutliers:   s.exclude.v,
			MessageSizeBytes:  a.size.v,
			Parallel:          a.par.v,
			Burst:             a.burst.v,
			RateBitsPerSecond: s.rate.v,
			HostNetwork:       s.hostNet.v,
			Service:           s.service.v,
			IPFamily:          a.family,
			Network:           s.network.v,
			Options:           cloneOptions(s.options),
		},
	}
	if c.Name == "" {
		c.Name = string(a.prof.v)
	}
	if x.opts.NetworkDirectOnly && (c.Params.Service || c.Params.HostNetwork) {
		c.Params.Network = ""
	}
	if !s.warmupSet && x.opts.DriverWarmup != nil {
		if w, ok := x.opts.DriverWarmup(a.drv.v); ok {
			c.Params.WarmupSeconds = w
		}
	}
	if s.timeout != nil && !s.timeout.bad {
		c.Params.TimeoutSeconds = s.timeout.v
	}
	src := caseSources{profile: a.prof.path, path: a.path.path, driver: a.drv.path, parallel: a.par.path, burst: a.burst.path,
		rate: s.rate.path, duration: s.duration.path, warmup: s.warmup.path, options: s.optionsPath,
		badTime: s.duration.bad || s.warmup.bad}
	if s.respSize != nil && (a.prof.v.IsRR() || a.prof.v == api.TCPStreamLat) {
		if !s.respSize.bad {
			c.Params.ResponseSizeBytes = s.respSize.v
		}
		src.respSize = s.respSize.path
	}
	if x.checkCase(c, a.size, a.family, src) {
		x.cases = append(x.cases, c)
	}
}

type caseSources struct {
	profile, path, driver, parallel, burst, rate, respSize, duration, warmup, options string
	// badTime: the duration or warm-up is already reported invalid (and zero in the case); the
	// driver checks then see the built-in defaults instead, so they add no second message.
	badTime bool
}

// checkLimits holds a case to its driver's row of the limits table (limits.For), the same
// values the driver's tool or agent enforces, and reports false when it is outside.
func (x *expander) checkLimits(c Case, size item[int], src caseSources) bool {
	lim := limits.For(c.Driver)
	ok := true
	fail := func(path, format string, a ...any) {
		x.errs.Add(path, format, a...)
		ok = false
	}
	who := fmt.Sprintf("the %s driver", c.Driver)
	if c.Params.Parallel > lim.MaxParallelFlows {
		fail(src.parallel, "parallel %d is more than %s runs (at most %d flows)", c.Params.Parallel, who, lim.MaxParallelFlows)
	}
	if c.Params.Burst > lim.MaxBurst {
		fail(src.burst, "burst %d is more than %s accepts (at most %d)", c.Params.Burst, who, lim.MaxBurst)
	}
	lo, hi := lim.MinMessageSizeBytes, lim.MaxMessageSizeBytes
	if c.Profile.IsUDP() {
		lo, hi = lim.MinUDPMessageSize(c.Profile == api.UDPRR), lim.MaxUDPMessageSizeBytes
	}
	for _, v := range []struct {
		what, path string
		n          int
	}{{"message size", size.path, size.v}, {"response size", src.respSize, c.Params.ResponseSizeBytes}} {
		switch {
		case v.n == 0:
		case v.n < lo:
			fail(v.path, "%s %d is less than %s accepts for %s (at least %d bytes)", v.what, v.n, who, c.Profile, lo)
		case v.n > hi:
			fail(v.path, "%s %d is more than %s accepts for %s (at most %d bytes)", v.what, v.n, who, c.Profile, hi)
		}
	}
	if d := c.Duration(); d > lim.MaxDuration {
		fail(src.duration, "duration %s is too long for %s (at most %s)", d, who, lim.MaxDuration)
	}
	if w := c.Warmup(); w > lim.MaxWarmup {
		fail(src.warmup, "warm-up %s is too long for %s (at most %s)", w, who, lim.MaxWarmup)
	}
	return ok
}

// checkCase reports what is wrong with c; false means c is skipped (Options.SkipUnsupported).
func (x *expander) checkCase(c Case, size item[int], family string, src caseSources) bool {
	if c.Profile.IsUDP() {
		limit, fam := MaxUDPPayloadIPv4, "IPv4"
		if family == "ipv6" {
			limit, fam = MaxUDPPayloadIPv6, "IPv6"
		}
		if size.v > limit {
			x.errs.Add(size.path, "message size %d is larger than the largest UDP payload (%d bytes over %s) for %s",
				size.v, limit, fam, c.Profile)
		}
		if c.Params.ResponseSizeBytes > limit {
			x.errs.Add(src.respSize, "response size %d is larger than the largest UDP payload (%d bytes over %s) for %s",
				c.Params.ResponseSizeBytes, limit, fam, c.Profile)
		}
	}
	if !x.checkLimits(c, size, src) || x.check == nil {
		return true
	}
	if src.badTime {
		c.Params.DurationSeconds, c.Params.WarmupSeconds = DefaultDurationSeconds, DefaultWarmupSeconds
	}
	err := x.check(c)
	if err == nil {
		return true
	}
	at := x.blame(c, src)
	if at == src.profile && x.opts.SkipUnsupported != nil && x.opts.SkipUnsupported(c, at, err) {
		return false
	}
	x.errs.Add(at, "%v", err)
	return true
}

// blame finds the field that makes check fail. With every optional knob reset, a failure is
// the profile's when another profile passes on the same path, the path's when another path
// passes (a platform that cannot make that path), and otherwise the driver's (unknown, or
// able to run nothing). When the knobs matter, it is the knob that fails on its own. A case
// that passes without its options and fails with them is the options' fault.
func (x *expander) blame(c Case, src caseSources) string {
	if len(c.Params.Options) > 0 {
		b := c
		b.Params.Options = nil
		if x.check(b) == nil {
			return src.options
		}
	}
	base := c
	base.Params.Options = nil
	base.Params.Parallel = 1
	base.Params.Burst = 0
	base.Params.RateBitsPerSecond = 0
	base.Params.ResponseSizeBytes = 0
	if x.check(base) != nil {
		for _, p := range api.Profiles {
			b := base
			b.Profile = p
			if x.check(b) == nil {
				return src.profile
			}
		}
		for _, p := range api.Paths {
			b := base
			b.Path = p
			if p != c.Path && x.check(b) == nil {
				return src.path
			}
		}
		return src.driver
	}
	knobs := []struct {
		set  bool
		path string
		with func(*Case)
	}{
		{c.Params.Parallel > 1, src.parallel, func(k *Case) { k.Params.Parallel = c.Params.Parallel }},
		{c.Params.Burst > 0, src.burst, func(k *Case) { k.Params.Burst = c.Params.Burst }},
		{c.Params.RateBitsPerSecond > 0, src.rate, func(k *Case) { k.Params.RateBitsPerSecond = c.Params.RateBitsPerSecond }},
		{c.Params.ResponseSizeBytes > 0, src.respSize, func(k *Case) { k.Params.ResponseSizeBytes = c.Params.ResponseSizeBytes }},
	}
	for _, k := range knobs {
		if !k.set {
			continue
		}
		b := base
		k.with(&b)
		if x.check(b) != nil {
			return k.path
		}
	}
	return src.profile
}

func cloneTarget(t *api.ConfidenceTarget) *api.ConfidenceTarget {
	if t == nil {
		return nil
	}
	c := *t
	return &c
}

func cloneOptions(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	return maps.Clone(m)
}

func secs(s float64) string { return (time.Duration(s * float64(time.Second))).String() }

func rrProfiles() []api.Profile {
	var out []api.Profile
	for _, p := range api.Profiles {
		if p.IsRR() {
			out = append(out, p)
		}
	}
	return out
}

// LimitFields names the fields CaseLimits reports against (e.g. a command's flags).
type LimitFields struct {
	Parallel, Burst, MessageSize, ResponseSize, Duration, Warmup, Samples string
	// AllowShortSamples lets the duration be shorter than limits.MinDuration.
	AllowShortSamples bool
}

// CaseLimits holds one case to its driver's row of the limits table (limits.For), as
// ExpandWith does for every case of a plan; for commands that build their cases without a
// plan (mesh). Every problem is returned as a *FieldErrors at the given field names.
func CaseLimits(c Case, f LimitFields) error {
	x := &expander{opts: Options{AllowShortSamples: f.AllowShortSamples}}
	if c.Params.DurationSeconds > 0 {
		x.checkShort(c.Params.DurationSeconds, f.Duration, secs(c.Params.DurationSeconds))
	}
	if msg := intRange("samples", c.Params.Samples, 1, MaxSamples); msg != "" && f.Samples != "" {
		x.errs.Add(f.Samples, "%s", msg)
	}
	x.checkLimits(c, item[int]{c.Params.MessageSizeBytes, f.MessageSize}, caseSources{parallel: f.Parallel, burst: f.Burst,
		respSize: f.ResponseSize, duration: f.Duration, warmup: f.Warmup})
	return x.errs.Err()
}
