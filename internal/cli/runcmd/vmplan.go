package runcmd

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/cnperf/cnperf/internal/config"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/plan"
	kubeplatform "github.com/cnperf/cnperf/internal/platform/kube"
)

// planVM is what a plan file's vm block gave the kube platform.
type planVM struct {
	loaded *config.Loaded // nil: no plan file, or no vm block in it
	// fromPlan: the settings the plan gave (not overridden by their flag); overridden: the flags
	// given over a value of the plan.
	fromPlan   map[string]bool
	overridden []string
	// off is where the plan's vm block is when --vm=none turned it off ("" otherwise).
	off string
}

// vmNone is --vm=none: no VM endpoints, whatever a plan's vm block says.
const vmNone = "none"

// applyPlanVM gives the kube options k the settings of the vm block of the plan file l (nil: no
// file), each that its flag does not set: the command line overrides the plan. The platform
// validates the values (kubeplatform.VMSettingError; planVM.fileError reports those the plan
// gave at their line). It runs before the platform is set up. --vm=none turns the plan's VMs
// off: the run's endpoints are pods, whatever the plan says.
func applyPlanVM(fs *pflag.FlagSet, l *config.Loaded, k *kubeplatform.Options) (planVM, error) {
	changed := func(name string) bool { f := fs.Lookup(name); return f != nil && f.Changed }
	if changed("vm") && k.VM == vmNone {
		k.VM = ""
		if l != nil && l.Plan != nil && l.Plan.VM != nil {
			return planVM{off: l.Locate("vm")}, nil
		}
		return planVM{}, nil
	}
	if l == nil || l.Plan == nil || l.Plan.VM == nil {
		return planVM{}, nil
	}
	v := l.Plan.VM
	pv := planVM{loaded: l, fromPlan: map[string]bool{}}
	if v.Endpoints == "" && !changed("vm") {
		return pv, pv.fieldError("vm", "no endpoints: say which endpoints are VMs, endpoints: server, client or both (or --vm on the command line)")
	}
	var timeout string
	// each setting of the plan's vm block (api.PlanVM's fields), the flag over it, and its
	// assignment to the kube options
	settings := []struct {
		setting, flag string
		assign        func(flagGiven bool) bool
	}{
		{"endpoints", "vm", func(g bool) bool { return assign(&k.VM, v.Endpoints, g) }},
		{"image", "vm-image", func(g bool) bool { return assign(&k.VMImage, v.Image, g) }},
		{"binding", "vm-binding", func(g bool) bool { return assign(&k.VMBinding, v.Binding, g) }},
		{"sockets", "sockets", func(g bool) bool { return assign(&k.VMSockets, v.Sockets, g) }},
		{"cores", "cores", func(g bool) bool { return assign(&k.VMCores, v.Cores, g) }},
		{"threads", "threads", func(g bool) bool { return assign(&k.VMThreads, v.Threads, g) }},
		{"memory", "vm-memory", func(g bool) bool { return assign(&k.VMMemory, v.Memory, g) }},
		{"startTimeout", "vm-start-timeout", func(g bool) bool { return assign(&timeout, v.StartTimeout, g) }},
	}
	for _, s := range settings {
		given := changed(s.flag)
		has := s.assign(given)
		switch {
		case has && given:
			pv.overridden = append(pv.overridden, "--"+s.flag)
		case has:
			pv.fromPlan[s.setting] = true
		}
	}
	if timeout != "" {
		d, err := plan.ParseDuration(timeout)
		if err != nil {
			return pv, pv.fieldError("vm.startTimeout", err.Error())
		}
		k.VMStartTimeout = d
	}
	return pv, nil
}

// assign sets *dst to the plan's value v unless the flag was given, and says whether the plan
// has a value (not the zero value).
func assign[T comparable](dst *T, v T, flagGiven bool) bool {
	var zero T
	if v == zero {
		return false
	}
	if !flagGiven {
		*dst = v
	}
	return true
}

// fieldError is a problem of the plan's field path ("vm.binding"), as the plan's other problems:
// "plan.yaml:7: vm.binding: ...", a usage error.
func (pv planVM) fieldError(path, msg string) error {
	fe := &plan.FieldErrors{Errors: []plan.FieldError{{Path: path, Message: msg}}}
	return &exit.UsageError{Err: fmt.Errorf("invalid plan:\n%w", config.AnnotateErrors(pv.loaded, fe))}
}

// fileError turns the platform's refusal of a VM setting the plan gave into the plan's error at
// that setting's line (a setting nobody gave, such as a missing image, is the plan's when its vm
// block is there and the flag is not); other errors are returned as they are.
func (pv planVM) fileError(err error, fs *pflag.FlagSet) error {
	var se *kubeplatform.VMSettingError
	if pv.loaded == nil || !errors.As(err, &se) {
		return err
	}
	f := fs.Lookup(strings.TrimPrefix(se.Flag, "--"))
	if !pv.fromPlan[se.Setting] && (f == nil || f.Changed) {
		return err
	}
	return pv.fieldError("vm."+se.Setting, se.Problem)
}

// endpointsFromPlan says whether the plan's vm block chose the VM endpoints (not --vm).
func (pv planVM) endpointsFromPlan() bool { return pv.fromPlan["endpoints"] }

// note is what --dry-run says of the plan's vm block: where it is and the flags over it.
func (pv planVM) note() string {
	if pv.off != "" {
		return "no VMs: --vm=none turns off the plan's vm block (" + pv.off + ")"
	}
	if pv.loaded == nil {
		return ""
	}
	n := "VM settings from " + pv.loaded.Locate("vm") + " (vm)"
	if len(pv.overridden) > 0 {
		n += "; the command line's " + strings.Join(pv.overridden, ", ") + " override the plan's"
	}
	return n
}
