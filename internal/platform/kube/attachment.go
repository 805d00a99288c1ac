package kube

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
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
	iface, sip, mtu, err := p.attachmentOf(srv, a.Network, family)
	if err != nil {
		return nil, err
	}
	a.Interface, a.ServerIP = iface, sip
	if cli == nil || cli.pod == nil {
		return nil, errors.New("no client pod on the secondary network")
	}
	cif, cip, cmtu, err := p.attachmentOf(cli, a.Network, family)
	if err != nil {
		return nil, err
	}
	a.ClientIP = cip
	switch {
	case mtu > 0:
		a.MTUBytes = mtu
	case cmtu > 0:
		a.MTUBytes = cmtu
	case cli.spec.VM:
		// no pod to read the interface's MTU in (a guest's NIC is not its launcher pod's
		// interface): the definition's, when it says
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

// attachmentOf is an endpoint's interface, address and MTU on the secondary network, from the
// network status Multus wrote on its pod (a VM's launcher pod: the address KubeVirt's bridge
// binding serves the guest by DHCP); a VM that sets a static address (Platform.vmStatic) has
// that one, and its launcher pod's interface.
func (p *Platform) attachmentOf(ep *endpoint, network, family string) (iface, ip string, mtu int, err error) {
	if !ep.spec.VM || !p.vmStatic {
		return kube.AttachmentOf(ep.pod, network, family)
	}
	st, err := kube.AttachmentStatus(ep.pod, network)
	if err != nil {
		return "", "", 0, err
	}
	pfx, err := netip.ParsePrefix(ep.spec.Address)
	if err != nil {
		return "", "", 0, fmt.Errorf("VM %s: its static address on %s: %w", ep.spec.Name, network, err)
	}
	ip = kube.PickIP([]string{pfx.Addr().String()}, family)
	if ip == "" {
		return "", "", 0, fmt.Errorf("VM %s has no %s address on %s (its static address is %s)", ep.spec.Name, kube.FamilyName(family), network, pfx)
	}
	return st.Interface, ip, st.MTU, nil
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
