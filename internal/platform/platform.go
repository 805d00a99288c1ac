// Package platform defines where endpoints live: the local host (loopback and network
// namespace labs) or a Kubernetes cluster. A platform places servers and clients for each
// case and runs the argv lines drivers build.
package platform

import (
	"context"
	"fmt"
	"sync"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/measure"
	"github.com/cnperf/cnperf/internal/plan"
)

// Executor runs commands on one endpoint.
type Executor interface {
	// Exec runs cmd to completion (or until ctx ends / cmd.Timeout passes) and returns its
	// output. It never returns a nil Output: failures go in Output.Err.
	Exec(ctx context.Context, cmd driver.Command) driver.Output
}

// ExecAll runs cmds at the same time on ex (the parallel flows of a sample, one process each)
// and returns their outputs in order; a command without a timeout gets timeout.
func ExecAll(ctx context.Context, ex Executor, cmds []driver.Command, timeout time.Duration) []driver.Output {
	outs := make([]driver.Output, len(cmds))
	var wg sync.WaitGroup
	for i, cmd := range cmds {
		if cmd.Timeout == 0 {
			cmd.Timeout = timeout
		}
		wg.Add(1)
		go func(i int, cmd driver.Command) {
			defer wg.Done()
			outs[i] = ex.Exec(ctx, cmd)
		}(i, cmd)
	}
	wg.Wait()
	return outs
}

// Pair is what a case runs on: the client endpoint, what it dials, and where both really are.
type Pair struct {
	Client Executor
	// Server, when set, runs commands beside the server (in its pod or network namespace),
	// for checks that need both ends (the path-MTU check); nil when the platform cannot (an
	// external server, a Service with several backends).
	Server    Executor
	Target    driver.Target
	Placement *api.Placement
	Topology  *api.Topology
	// Explain, when set, says what happened to the endpoints when a sample failed with err
	// (a server pod deleted, a node whose kubelet the API server cannot reach), or "" when it
	// sees nothing wrong; the runner adds it to the sample's error.
	Explain func(ctx context.Context, err error) string
}

// Platform places endpoints.
type Platform interface {
	Name() string
	// Prepare sets up everything the cases need (namespaces, pods, services, servers) once,
	// before the first case. It must be safe to call Close after a failed Prepare.
	Prepare(ctx context.Context, cases []plan.Case, drivers map[string]driver.Driver) error
	// Pair returns the endpoints for one case.
	Pair(ctx context.Context, c plan.Case) (*Pair, error)
	// Close removes everything Prepare created. It is idempotent and must work with a
	// context that is not the (possibly cancelled) run context.
	Close(ctx context.Context) error
}

// Traits is what a platform says about itself, so that commands need not know platforms by
// name.
type Traits struct {
	// DefaultPaths are the paths a case gets when its plan names none.
	DefaultPaths []api.Path
	// Cluster: endpoints are pods of a Kubernetes cluster (tiger-bench's tests need one).
	Cluster bool
	// HostOnly: endpoints are processes on this host, so a case's pod fields (service,
	// hostNetwork) mean nothing.
	HostOnly bool
}

// TraitDescriber is implemented by platforms that describe their traits.
type TraitDescriber interface {
	Traits() Traits
}

// TraitsOf is p's traits; a platform that does not describe itself is taken as a cluster
// whose cases default to the pod-pod-cross-node path.
func TraitsOf(p Platform) Traits {
	if d, ok := p.(TraitDescriber); ok {
		return d.Traits()
	}
	return DefaultTraits()
}

// DefaultTraits are the traits of a platform that does not describe itself.
func DefaultTraits() Traits {
	return Traits{DefaultPaths: []api.Path{api.PathPodPodCrossNode}, Cluster: true}
}

// ClusterDescriber is implemented by platforms that can describe the cluster or host.
type ClusterDescriber interface {
	Describe(ctx context.Context) (*api.ClusterDetails, error)
}

// LeftoverDescriber is implemented by platforms that create things outside this process
// (namespaces and pods, network namespaces): when Close fails or is cut short (a second
// Ctrl-C), it says what may be left and the exact command that removes it; "" when nothing
// can be left (nothing was created, or Close finished).
type LeftoverDescriber interface {
	Leftovers() string
}

// Leftovers is p's LeftoverDescriber message, or "" when p is not one.
func Leftovers(p Platform) string {
	if d, ok := p.(LeftoverDescriber); ok {
		return d.Leftovers()
	}
	return ""
}

// CaseExpander is implemented by platforms that measure one case on several topologies
// (the local lab: overlays, policy rule counts, service proxies).
type CaseExpander interface {
	ExpandCases(cases []plan.Case) []plan.Case
}

// PathLister is implemented by platforms that can list every path they support ("--path all").
type PathLister interface {
	Paths() []api.Path
}

// LabChecker is implemented by platforms with a namespace lab: why its paths cannot run here
// (nil when they can).
type LabChecker interface {
	LabAvailable() error
}

// FamilyDefaulter is implemented by platforms whose addresses may be IPv6 by default (a
// cluster whose pods and nodes are IPv6 first): the IP family a case that names none is
// measured on, "" when that is IPv4 (every driver's default).
type FamilyDefaulter interface {
	DefaultIPFamily(ctx context.Context) (string, error)
}

// DefaultFamily gives the cases that name no IP family p's default one, so that a driver whose
// server listens on one family (iperf 2 needs -V for IPv6, sockperf -i ::) starts it on the
// family its client dials, and every result names the family it measured. The cases are
// returned unchanged when p is no FamilyDefaulter or its default is IPv4.
func DefaultFamily(ctx context.Context, p Platform, cases []plan.Case) ([]plan.Case, error) {
	fd, ok := p.(FamilyDefaulter)
	if !ok {
		return cases, nil
	}
	fam, err := fd.DefaultIPFamily(ctx)
	if err != nil || fam == "" {
		return cases, err
	}
	out := make([]plan.Case, len(cases))
	for i, c := range cases {
		if c.Params.IPFamily == "" {
			c.Params.IPFamily = fam
		}
		out[i] = c
	}
	return out, nil
}

// PathChecker is implemented by platforms that support only some paths; the plan validator
// calls it before anything is deployed.
type PathChecker interface {
	CheckPath(c plan.Case) error
}

// Unit is p as one unit of a run (internal/measure): Prepare sets p up for cases, Close
// removes what it created ("cleanup: ..." when that fails), Leftovers is p's
// LeftoverDescriber message. The caller adds what it measures and how it words a failed set-up.
func Unit(p Platform, cases []plan.Case, drivers map[string]driver.Driver) measure.Unit {
	return measure.Unit{
		Prepare: func(ctx context.Context) error { return p.Prepare(ctx, cases, drivers) },
		Close: func(ctx context.Context) error {
			if err := p.Close(ctx); err != nil {
				return fmt.Errorf("cleanup: %w", err)
			}
			return nil
		},
		Leftovers: func() string { return Leftovers(p) },
	}
}
