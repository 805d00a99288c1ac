// Package platformtest is a fake platform for the tests of what drives a platform (the run
// session, `cnperf run`): its client answers every command with a real tool output captured
// in a driver's testdata/captured, so the real driver parses it. It stands in for a real
// platform only where the lifecycle around it is under test — prepare, describe, close on
// every way out, an interruption at a chosen command — which no real platform can be made to
// do on demand; the real platforms are tested in test/integration (local) and test/e2e (kube).
package platformtest

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/driver/toolkit/fixture"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/platform"
)

// Platform replays one captured output for every command (platform.Platform,
// platform.Executor, platform.ClusterDescriber).
type Platform struct {
	T testing.TB
	// Driver and Capture name the output: internal/driver/<Driver>/testdata/captured/<Capture>.*
	// (from a package directory two levels below internal/, e.g. internal/cli/runcmd).
	Driver, Capture string
	// DriverDir is the directory holding the driver packages ("../../driver" by default).
	DriverDir string
	// PlatformName is Name() ("fake" by default).
	PlatformName string
	PrepareErr   error
	// Cluster is what Describe returns.
	Cluster *api.ClusterDetails
	// OnExec, when set, is called after the nth command (from 1) was answered.
	OnExec func(n int)
	// Described, when set, is what Traits returns (else platform.DefaultTraits).
	Described *platform.Traits

	mu                      sync.Mutex
	prepared, closed, execs int
}

// Name implements platform.Platform: PlatformName, "fake" when empty.
func (p *Platform) Name() string {
	if p.PlatformName == "" {
		return "fake"
	}
	return p.PlatformName
}

// Prepare implements platform.Platform.
func (p *Platform) Prepare(context.Context, []plan.Case, map[string]driver.Driver) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.prepared++
	return p.PrepareErr
}

// Close implements platform.Platform.
func (p *Platform) Close(context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed++
	return nil
}

// Pair implements platform.Platform: the client is p itself.
func (p *Platform) Pair(context.Context, plan.Case) (*platform.Pair, error) {
	return &platform.Pair{Client: p, Target: driver.Target{Host: "127.0.0.1"}, Placement: &api.Placement{Target: "127.0.0.1"}}, nil
}

// Traits implements platform.TraitDescriber.
func (p *Platform) Traits() platform.Traits {
	if p.Described != nil {
		return *p.Described
	}
	return platform.DefaultTraits()
}

// Describe implements platform.ClusterDescriber.
func (p *Platform) Describe(context.Context) (*api.ClusterDetails, error) { return p.Cluster, nil }

// Exec implements platform.Executor: the captured output, with cmd's argv.
func (p *Platform) Exec(_ context.Context, cmd driver.Command) driver.Output {
	dir := p.DriverDir
	if dir == "" {
		dir = filepath.Join("..", "..", "driver")
	}
	o := fixture.Load(p.T, filepath.Join(dir, p.Driver, "testdata", "captured"), p.Capture).Output()
	o.Argv = cmd.Argv
	p.mu.Lock()
	p.execs++
	n := p.execs
	p.mu.Unlock()
	if p.OnExec != nil {
		p.OnExec(n)
	}
	return o
}

// Counts says how often the platform was prepared and closed and how many commands it ran.
func (p *Platform) Counts() (prepared, closed, execs int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.prepared, p.closed, p.execs
}
