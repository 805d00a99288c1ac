package kube

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/plan"
)

// runAttachment is the one secondary network of a plan's cases ("" when none has one): the
// endpoint pods are shared by every case, so a run measures on one secondary network (beside
// the cluster's own).
func runAttachment(cases []plan.Case) (string, error) {
	var nets []string
	for _, c := range cases {
		if n := c.Params.Network; n != "" && !contains(nets, n) {
			nets = append(nets, n)
		}
	}
	switch len(nets) {
	case 0:
		return "", nil
	case 1:
		return nets[0], nil
	}
	sort.Strings(nets)
	return "", fmt.Errorf("the plan names %d secondary networks (%s): a run measures on one; run one plan per network", len(nets), strings.Join(nets, ", "))
}

// readAttachment reads the run's secondary network (kube.ReadAttachment). Nothing is created
// before it.
func (p *Platform) readAttachment(ctx context.Context, network string) (*api.Attachment, error) {
	return kube.ReadAttachment(ctx, p.nadStore(), network)
}

// attachmentPair is the case's secondary network as its two pods have it. The MTU is the
// network status's when Multus reports one, else the client pod's interface's as the kernel has
// it (read once per run), else the definition's configuration's.
func (p *Platform) attachmentPair(ctx context.Context, srv, cli *endpoint, family string) (*api.Attachment, error) {
	if p.attachment == nil {
		return nil, errors.New("no secondary network was read in Prepare")
	}
	a := *p.attachment
	if a.Mode != nil && a.Mode.Primary {
		return primaryPair(a, srv, cli, family)
	}
	iface, sip, mtu, err := kube.AttachmentOf(srv.pod, a.Network, family)
	if err != nil {
		return nil, err
	}
	a.Interface, a.ServerIP = iface, sip
	if cli == nil || cli.pod == nil {
		return nil, errors.New("no client pod on the secondary network")
	}
	cif, cip, cmtu, err := kube.AttachmentOf(cli.pod, a.Network, family)
	if err != nil {
		return nil, err
	}
	a.ClientIP = cip
	switch {
	case mtu > 0:
		a.MTUBytes = mtu
	case cmtu > 0:
		a.MTUBytes = cmtu
	default:
		if p.attachmentMTU == 0 { // read once; -1: could not
			if p.attachmentMTU = p.interfaceMTU(ctx, cli.spec.Name, cif); p.attachmentMTU == 0 {
				p.attachmentMTU = -1
			}
		}
		if p.attachmentMTU > 0 {
			a.MTUBytes = p.attachmentMTU
		}
	}
	return &a, nil
}

// interfaceMTU reads an interface's MTU in a client pod; 0 (and a log line) when it cannot.
func (p *Platform) interfaceMTU(ctx context.Context, pod, iface string) int {
	e := &kube.PodExecutor{Stream: p.stream, Namespace: p.s.clientNamespace(), Pod: pod, Container: kube.ClientContainer,
		DefaultTimeout: 20 * time.Second, MaxOutput: 1 << 10}
	argv := []string{"cat", "/sys/class/net/" + iface + "/mtu"}
	out := e.Exec(ctx, driver.Command{Argv: argv})
	if out.Err == nil && out.ExitCode == 0 {
		if mtu, err := strconv.Atoi(strings.TrimSpace(string(out.Stdout))); err == nil {
			return mtu
		}
	}
	p.logf("secondary network: the MTU of %s in pod %s is unknown (%s: exit %d, %v): the result gives the definition's", iface, pod,
		kube.ShellJoin(argv), out.ExitCode, out.Err)
	return 0
}

// primaryPair is the case's primary UserDefinedNetwork as its two pods have it: their
// addresses from OVN-Kubernetes's k8s.ovn.org/pod-networks (kube.PrimaryAddressOf, k8s-netperf's
// reading); the interface and its MTU are not in that annotation and are left unsaid.
func primaryPair(a api.Attachment, srv, cli *endpoint, family string) (*api.Attachment, error) {
	sip, err := kube.PrimaryAddressOf(srv.pod, a.Network, family)
	if err != nil {
		return nil, err
	}
	if cli == nil || cli.pod == nil {
		return nil, errors.New("no client pod on the primary network")
	}
	cip, err := kube.PrimaryAddressOf(cli.pod, a.Network, family)
	if err != nil {
		return nil, err
	}
	a.ServerIP, a.ClientIP = sip, cip
	return &a, nil
}
