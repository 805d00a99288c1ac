package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/plan"
)

// Multus's pod annotations (the Kubernetes Network Custom Resource Definition De-facto Standard):
// the networks a pod asks for, and what each attachment became.
const (
	annotationNetworks      = "k8s.v1.cni.cncf.io/networks"
	annotationNetworkStatus = "k8s.v1.cni.cncf.io/network-status"
	// nadGroup and nadResource are the NetworkAttachmentDefinition's API group and resource.
	nadGroup    = "k8s.cni.cncf.io"
	nadResource = "network-attachment-definitions"
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

// readAttachment reads the run's secondary network: the NetworkAttachmentDefinition must exist
// and be readable, and its configuration name a CNI plugin. Nothing is created before it.
func (p *Platform) readAttachment(ctx context.Context, network string) (*api.Attachment, error) {
	ns, name, _ := strings.Cut(network, "/")
	raw, err := p.nadStore().Get(ctx, ns, name)
	switch {
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("network %s: NetworkAttachmentDefinition %s not found in namespace %s (Multus and the definition must exist first: kubectl get %s.%s -n %s): %w",
			network, name, ns, nadResource, nadGroup, ns, err)
	case apierrors.IsForbidden(err):
		return nil, fmt.Errorf("network %s: may not read it (%s grants get on %s.%s): %w", network, kube.NetworksManifest, nadResource, nadGroup, err)
	case err != nil:
		return nil, fmt.Errorf("network %s: read NetworkAttachmentDefinition: %w", network, err)
	}
	return parseNAD(network, raw)
}

// parseNAD reads the CNI plugin type and MTU of a NetworkAttachmentDefinition's configuration
// (spec.config, a JSON string: one plugin, or a list whose first plugin is the interface's).
func parseNAD(network string, raw []byte) (*api.Attachment, error) {
	var nad struct {
		Kind string `json:"kind"`
		Spec struct {
			Config string `json:"config"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(raw, &nad); err != nil {
		return nil, fmt.Errorf("network %s: the NetworkAttachmentDefinition is not JSON: %w", network, err)
	}
	if nad.Kind != "" && nad.Kind != "NetworkAttachmentDefinition" {
		return nil, fmt.Errorf("network %s: the API answered a %s, not a NetworkAttachmentDefinition (is Multus's CRD installed?)", network, nad.Kind)
	}
	a := &api.Attachment{Network: network}
	if strings.TrimSpace(nad.Spec.Config) == "" {
		// a definition without config names a CNI configuration file on the nodes (Multus reads it there)
		return a, nil
	}
	type plugin struct {
		Type   string `json:"type"`
		MTU    int    `json:"mtu"`
		Master string `json:"master"`
	}
	var conf struct {
		plugin
		Plugins []plugin `json:"plugins"`
	}
	if err := json.Unmarshal([]byte(nad.Spec.Config), &conf); err != nil {
		return nil, fmt.Errorf("network %s: spec.config is not a CNI configuration (JSON): %w", network, err)
	}
	if conf.Type == "" && len(conf.Plugins) > 0 {
		conf.plugin = conf.Plugins[0]
	}
	if conf.Type == "" {
		return nil, fmt.Errorf("network %s: spec.config names no CNI plugin (no \"type\")", network)
	}
	a.Type, a.MTUBytes, a.Master = conf.Type, conf.MTU, conf.Master
	return a, nil
}

// describeAttachment says what a NetworkAttachmentDefinition's configuration is, for the log.
func describeAttachment(a *api.Attachment) string {
	switch {
	case a.Type == "":
		return "configuration on the nodes (the definition has no spec.config)"
	case a.MTUBytes > 0:
		return fmt.Sprintf("CNI plugin %s, MTU %d", a.Type, a.MTUBytes)
	}
	return fmt.Sprintf("CNI plugin %s, MTU not set in its configuration", a.Type)
}

// networkStatus is one entry of a pod's k8s.v1.cni.cncf.io/network-status annotation.
type networkStatus struct {
	Name      string   `json:"name"`
	Interface string   `json:"interface"`
	IPs       []string `json:"ips"`
	MTU       int      `json:"mtu"`
	Default   bool     `json:"default"`
}

// attachmentOf is a pod's interface on network (NAMESPACE/NAME), from the network status
// Multus wrote: its name, its address of the family, and its MTU (0 when not reported).
func attachmentOf(pod *corev1.Pod, network, family string) (iface, ip string, mtu int, err error) {
	raw, ok := pod.Annotations[annotationNetworkStatus]
	if !ok {
		return "", "", 0, fmt.Errorf("pod %s has no %s annotation: Multus did not attach it to %s (is Multus the cluster's first CNI configuration?)",
			pod.Name, annotationNetworkStatus, network)
	}
	var st []networkStatus
	if err := json.Unmarshal([]byte(raw), &st); err != nil {
		return "", "", 0, fmt.Errorf("pod %s: %s is not JSON: %w", pod.Name, annotationNetworkStatus, err)
	}
	var names []string
	for _, s := range st {
		if s.Name != network || s.Default {
			names = append(names, s.Name)
			continue
		}
		if ip = pickIP(s.IPs, family); ip == "" {
			return "", "", 0, fmt.Errorf("pod %s has no %s address on %s (interface %s, addresses %s)",
				pod.Name, familyName(family), network, s.Interface, strings.Join(s.IPs, ", "))
		}
		return s.Interface, ip, s.MTU, nil
	}
	return "", "", 0, fmt.Errorf("pod %s is not attached to %s (its network status names %s)", pod.Name, network, strings.Join(names, ", "))
}

// attachmentPair is the case's secondary network as its two pods have it. The MTU is the
// network status's when Multus reports one, else the client pod's interface's as the kernel has
// it (read once per run), else the definition's configuration's.
func (p *Platform) attachmentPair(ctx context.Context, srv, cli *endpoint, family string) (*api.Attachment, error) {
	if p.attachment == nil {
		return nil, errors.New("no secondary network was read in Prepare")
	}
	a := *p.attachment
	iface, sip, mtu, err := attachmentOf(srv.pod, a.Network, family)
	if err != nil {
		return nil, err
	}
	a.Interface, a.ServerIP = iface, sip
	if cli == nil || cli.pod == nil {
		return nil, errors.New("no client pod on the secondary network")
	}
	cif, cip, cmtu, err := attachmentOf(cli.pod, a.Network, family)
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

// mergeNetworks is the k8s.v1.cni.cncf.io/networks annotation of an attachment pod whose
// --pod-annotations already ask for networks (user): theirs, then the run's network (NAMESPACE/
// NAME), in the form they used: a comma-separated list, or a JSON list of network selection
// elements. A list that names the network already is kept as it is.
func mergeNetworks(user, network string) (string, error) {
	user = strings.TrimSpace(user)
	if user == "" {
		return network, nil
	}
	ns, name, _ := strings.Cut(network, "/")
	if strings.HasPrefix(user, "[") {
		var sel []map[string]any
		if err := json.Unmarshal([]byte(user), &sel); err != nil {
			return "", fmt.Errorf("--pod-annotations %s: %q is not a JSON list of network selection elements: %w", annotationNetworks, user, err)
		}
		for _, e := range sel {
			if e["name"] == name && e["namespace"] == ns {
				return user, nil
			}
		}
		sel = append(sel, map[string]any{"name": name, "namespace": ns})
		b, err := json.Marshal(sel)
		if err != nil {
			return "", err
		}
		return string(b), nil
	}
	for _, e := range strings.Split(user, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			return "", fmt.Errorf("--pod-annotations %s: %q has an empty element: want NAMESPACE/NAME[@INTERFACE] elements separated by commas", annotationNetworks, user)
		}
		if base, _, _ := strings.Cut(e, "@"); base == network {
			return user, nil
		}
	}
	return user + "," + network, nil
}
