package runcmd

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/cli/flags"
	"github.com/cnperf/cnperf/internal/driver/all"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/gate"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/platform"
	kubeplatform "github.com/cnperf/cnperf/internal/platform/kube"
	"github.com/cnperf/cnperf/internal/platform/local"
	"github.com/cnperf/cnperf/internal/text"
)

// platformOptions hold the flags of every platform and of the gates that compare results.
type platformOptions struct {
	local     local.Options
	lab       lab.Options
	kube      kubeplatform.Options
	external  string
	tolerance float64
}

func (p *platformOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&p.external, "external", "", "external-service path: the address to dial, HOST[:PORT[,PORT...]] (ports replace the driver's server ports in order)")
	fs.Float64Var(&p.tolerance, "tolerance", 0, "fail (exit 1) when hostNetwork and pod network differ by more than PCT percent for the same profile, driver and path class (0 = off)")
	fs.StringVar(&p.local.AgentBinary, "agent-binary", "", "local: the cnperf binary to run as the native agent (default: this binary)")
	p.lab = lab.DefaultOptions()
	p.local.Lab = &p.lab
	flags.Lab(fs, &p.lab)
	flags.Kube(fs, &p.kube)
}

// choose picks the platform. auto means kube when --kubeconfig or --context is given or a
// cluster is configured, else local. An explicit --kubeconfig or --context must load (a
// missing or unreadable file, an unknown context: exit 2, as kubectl), also with --dry-run;
// with --platform local it is refused, never ignored. With dryRun the kube platform gets no
// client: it can check paths but never reach the cluster.
func (p *platformOptions) choose(name, runID string, log io.Writer, defaultSuite, dryRun bool) (platform.Platform, error) {
	newKube := p.newKube
	if dryRun {
		newKube = func(runID string, _ io.Writer) (platform.Platform, error) { return p.dryKube(runID) }
	}
	p.local.External, p.kube.External = p.external, p.external
	p.local.RunID = runID
	explicit := p.kube.Kubeconfig != "" || p.kube.Context != ""
	if explicit && name != "local" {
		if _, err := kube.RESTConfig(p.kube.Kubeconfig, p.kube.Context); err != nil {
			return nil, exit.Usage("%s: %v", explicitFlags(p.kube), err)
		}
	}
	switch name {
	case "auto", "":
		if explicit {
			fmt.Fprintf(log, "using the kube platform (%s)\n", explicitFlags(p.kube))
			return newKube(runID, log)
		}
		if ok, why := kube.Detect(); ok && !defaultSuite {
			fmt.Fprintf(log, "using the kube platform (%s)\n", why)
			return newKube(runID, log)
		} else if ok {
			fmt.Fprintf(log, "a cluster is configured (%s) but no plan was given: running the default local suite; use --platform kube to measure the cluster\n", why)
		} else {
			fmt.Fprintf(log, "no Kubernetes cluster found (%s): using the local platform\n", why)
		}
		return local.New(p.local, log), nil
	case "local":
		if explicit {
			return nil, exit.Usage("%s: the local platform uses no cluster; drop the flag or use --platform kube", explicitFlags(p.kube))
		}
		return local.New(p.local, log), nil
	case "kube":
		return newKube(runID, log)
	default:
		return nil, exit.Usage("--platform: unknown platform %q (expected auto, local or kube)%s", name, flags.Suggest(name, PlatformNames))
	}
}

// explicitFlags names the kube flags given, with their values.
func explicitFlags(o kubeplatform.Options) string {
	var f []string
	if o.Kubeconfig != "" {
		f = append(f, "--kubeconfig "+o.Kubeconfig)
	}
	if o.Context != "" {
		f = append(f, "--context "+o.Context)
	}
	return strings.Join(f, " ")
}

func (p *platformOptions) newKube(runID string, log io.Writer) (platform.Platform, error) {
	p.kube.VMGuestTools = all.GuestTools()
	k, err := kubeplatform.New(p.kube, runID, log)
	if err != nil {
		return nil, exit.Usage("kube platform: %w", err)
	}
	return k, nil
}

// dryKube is the kube platform without a clientset, for --dry-run: it checks paths and
// options as a real run would, and cannot reach a cluster.
func (p *platformOptions) dryKube(runID string) (*kubeplatform.Platform, error) {
	p.kube.External = p.external
	p.kube.VMGuestTools = all.GuestTools()
	k, err := kubeplatform.NewWithClient(p.kube, runID, io.Discard, nil, nil)
	if err != nil {
		return nil, exit.Usage("kube platform: %w", err)
	}
	return k, nil
}

// podMetadata is what --pod-labels and --pod-annotations give every pod, as --dry-run says it.
func (p *platformOptions) podMetadata() (string, error) {
	m, err := kube.ParsePodMetadata(p.kube.PodLabels, p.kube.PodAnnotations)
	if err != nil {
		return "", exit.Usage("%v", err)
	}
	return m.String(), nil
}

// checkPlan refuses, before anything runs, a gate that would have nothing to compare.
func (p *platformOptions) checkPlan(cases []plan.Case) error {
	if p.tolerance == 0 {
		return nil
	}
	if err := gate.CheckPlan(cases); err != nil {
		return exit.Usage("%v", err)
	}
	return nil
}

// gate applies pass/fail gates (--tolerance) to a finished run.
func (p *platformOptions) gate(run *api.Run, log io.Writer) error {
	if p.tolerance == 0 {
		return nil
	}
	report, violations := gate.Tolerance(run, p.tolerance)
	if report != "" && !strings.HasSuffix(report, "\n") {
		report += "\n" // the log takes whole lines
	}
	fmt.Fprint(log, report)
	if len(violations) > 0 {
		msgs := ""
		for _, v := range violations { // each wrapped to the width of the table above it
			msgs += "\n" + strings.Join(text.Wrap(v.String(), text.DefaultWidth, "  ", "    "), "\n")
		}
		return exit.Failure("tolerance of %.1f%% exceeded:%s", p.tolerance, msgs)
	}
	return nil
}

// allPaths resolves "--path all" for the platform: every path it supports; on the local
// platform without privileges, loopback only, and it says why.
func allPaths(plat platform.Platform, log io.Writer) []string {
	pl, ok := plat.(platform.PathLister)
	if !ok {
		return nil
	}
	paths := pl.Paths()
	if lc, ok := plat.(platform.LabChecker); ok {
		if err := lc.LabAvailable(); err != nil {
			fmt.Fprintf(log, "note: only the loopback path can run: %v\n", err)
			paths = []api.Path{api.PathLoopback}
		}
	}
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = string(p)
	}
	return out
}
