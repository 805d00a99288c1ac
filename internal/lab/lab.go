// Package lab builds the datapaths of a Kubernetes cluster out of network namespaces on one
// host, with the kernel pieces CNIs use: veth pairs, Linux bridges, routes, a VXLAN overlay,
// nftables/iptables-nft DNAT with conntrack for a ClusterIP, and N network-policy filter
// rules. Each "cluster" has two node namespaces joined by an underlay that lives in its own
// "fabric" namespace, and pod namespaces attached to a bridge in their node.
//
// Everything the lab creates is a namespace named "cnp-<tag>-…" (tag: six hex digits of the
// run id) or lives inside one; nothing is created or changed in the root namespace. Deleting
// the namespaces removes everything; Cleanup finds what a killed run left by the prefix.
package lab

import (
	"context"
	"errors"
	"fmt"
	"github.com/cnperf/cnperf/internal/measure"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Lab is one run's set of clusters.
type Lab struct {
	opts   Options
	addrs  addrPlan
	runID  string
	tag    string
	marker ownerMarker
	log    io.Writer

	mu       sync.Mutex
	clusters []*Cluster
	checked  bool
	closed   bool
}

// New returns a lab for the run. It validates the options and creates nothing yet.
// A detached lab (cnperf lab up) is marked as having no owner process, so `lab cleanup`
// removes it whenever asked.
func New(runID string, o Options, detached bool, log io.Writer) (*Lab, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	tag, err := RunTag(runID)
	if err != nil {
		return nil, err
	}
	a, _ := newAddrPlan(o.CIDR)
	if log == nil {
		log = io.Discard
	}
	return &Lab{opts: o, addrs: a, runID: runID, tag: tag, marker: selfMarker(runID, detached), log: log}, nil
}

// Tag is the six hex digits that prefix the lab's objects.
func (l *Lab) Tag() string { return l.tag }

// Options are the lab's options.
func (l *Lab) Options() Options { return l.opts }

// Check verifies, before anything is created, that the lab can be built: privileges, tools,
// no collision of its range with the host, no namespaces left with the same tag.
func (l *Lab) Check(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.checkLocked(ctx)
}

func (l *Lab) checkLocked(ctx context.Context) error {
	if l.checked {
		return nil
	}
	if err := CheckPrivileges(); err != nil {
		return err
	}
	tools := []string{"ip", "bridge", "nft"}
	for _, p := range l.opts.ServiceProxies {
		if p == ProxyIptables {
			tools = append(tools, "iptables-nft-restore")
		}
	}
	for _, t := range tools {
		if _, err := exec.LookPath(t); err != nil {
			return fmt.Errorf("the network-namespace lab needs %s (iproute2, nftables, iptables): %w", t, err)
		}
	}
	if err := checkHost(ctx, l.addrs); err != nil {
		return err
	}
	names, err := listNetNS()
	if err != nil {
		return err
	}
	for _, n := range names {
		if TagOf(n) == l.tag {
			return fmt.Errorf("network namespace %s already exists with this run's tag %s: another run with a similar id, or leftovers (see `cnperf lab list`, `cnperf lab cleanup`)", n, l.tag)
		}
	}
	l.checked = true
	return nil
}

// Cluster returns the cluster of spec, building it on first use. A cluster that fails to
// build is destroyed before the error returns.
func (l *Lab) Cluster(ctx context.Context, spec Spec) (*Cluster, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, errors.New("the lab is closed")
	}
	for _, c := range l.clusters {
		if c.Spec == spec {
			return c, nil
		}
	}
	if err := l.checkLocked(ctx); err != nil {
		return nil, err
	}
	c := &Cluster{Spec: spec, tag: l.tag, addrs: l.addrs}
	if err := c.build(ctx, l.marker, l.log); err != nil {
		dctx, cancel := measure.Cleanup(ctx, 30*time.Second)
		defer cancel()
		if derr := c.destroy(dctx); derr != nil {
			err = errors.Join(err, fmt.Errorf("and removing the partial cluster failed: %w", derr))
		}
		return nil, fmt.Errorf("build lab cluster %s: %w", spec.Name(), err)
	}
	l.clusters = append(l.clusters, c)
	return c, nil
}

// Clusters lists the built clusters in build order.
func (l *Lab) Clusters() []*Cluster {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*Cluster(nil), l.clusters...)
}

// Close destroys every cluster. It is idempotent, tries every namespace even after an error,
// and should get a context that is not the (possibly cancelled) run context.
func (l *Lab) Close(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	var errs []error
	for i := len(l.clusters) - 1; i >= 0; i-- {
		c := l.clusters[i]
		if err := c.destroy(ctx); err != nil {
			errs = append(errs, fmt.Errorf("remove lab cluster %s: %w", c.Spec.Name(), err))
		}
	}
	l.clusters = nil
	// Sweep: anything else with this run's tag (a cluster whose build was interrupted after
	// its namespaces were made but before it was recorded).
	if names, err := listNetNS(); err != nil {
		errs = append(errs, err)
	} else {
		for _, n := range names {
			if TagOf(n) == l.tag {
				if err := deleteNetNS(ctx, n); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w (run `cnperf lab cleanup` to retry)", errors.Join(errs...))
	}
	return nil
}

// Capability numbers (linux/capability.h).
const (
	capNetAdmin = 12
	capSysAdmin = 21
)

// ErrNoPrivileges is wrapped by CheckPrivileges' error.
var ErrNoPrivileges = errors.New("not privileged enough for the network-namespace lab")

// CheckPrivileges reports whether this process may build the lab: creating, configuring and
// entering network namespaces needs CAP_NET_ADMIN and CAP_SYS_ADMIN.
func CheckPrivileges() error {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return fmt.Errorf("%w: read /proc/self/status: %v", ErrNoPrivileges, err)
	}
	var eff uint64
	found := false
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
			eff, err = strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				return fmt.Errorf("%w: parse CapEff %q: %v", ErrNoPrivileges, v, err)
			}
			found = true
		}
	}
	if !found {
		return fmt.Errorf("%w: no CapEff line in /proc/self/status", ErrNoPrivileges)
	}
	return checkCaps(eff)
}

func checkCaps(eff uint64) error {
	var missing []string
	if eff&(1<<capNetAdmin) == 0 {
		missing = append(missing, "CAP_NET_ADMIN")
	}
	if eff&(1<<capSysAdmin) == 0 {
		missing = append(missing, "CAP_SYS_ADMIN")
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: this process lacks %s (needed to create, configure and enter network namespaces); run as root, or only the loopback path can run",
			ErrNoPrivileges, strings.Join(missing, " and "))
	}
	return nil
}
