package kube

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cnperf/cnperf/internal/kube"
)

// A k8s-netperf network mode (--udnl2, --udnl3, --cudn, --sriov; Options.NetworkMode) on a
// cluster that has what it needs: the run creates the mode's objects after its namespace, waits
// for the NetworkAttachmentDefinition OVN-Kubernetes or the SR-IOV operator makes from them, and
// measures on it as on any --network (the cases' network is that definition); Close deletes
// what the run created, once its pods are gone.

// ModeNetwork is the network (NAMESPACE/NAME) a run with these options measures on in mode m:
// the definition m's objects make in the servers' namespace.
func (o Options) ModeNetwork(m *kube.NetworkMode) string {
	return m.Network(o.withDefaults().serverNamespaceOf())
}

// serverNamespaceOf is the servers' namespace of options not parsed yet.
func (o Options) serverNamespaceOf() string {
	if o.ServerNamespace != "" {
		return o.ServerNamespace
	}
	return o.Namespace
}

// objectStore is the platform's (a test may have set its own).
func (p *Platform) objectStore() kube.ObjectStore {
	if p.objects == nil {
		return kube.RESTObjects{CS: p.cs}
	}
	return p.objects
}

// checkModeNetwork: with a network mode, the cases must be on the mode's network.
func (p *Platform) checkModeNetwork(network string) error {
	m := p.s.NetworkMode
	if m == nil {
		return nil
	}
	want := m.Network(p.s.serverNamespace())
	switch network {
	case want:
		return nil
	case "":
		p.logf("no case is on a pod-to-pod path: %s's objects are not created", m.Flag)
		return nil
	}
	return fmt.Errorf("the cases are on network %s, not on %s, the network %s makes", network, want, m.Flag)
}

// createModeNetwork creates the mode's objects (each remembered as soon as the API took it, for
// Close) and waits for the definition they make.
func (p *Platform) createModeNetwork(ctx context.Context) error {
	m := p.s.NetworkMode
	ns := p.s.serverNamespace()
	objs, err := m.Objects(ns, p.runID)
	if err != nil {
		return err
	}
	err = kube.CreateModeObjects(ctx, p.objectStore(), objs, func(o kube.NetworkObject) {
		p.mu.Lock()
		p.modeCreated = append(p.modeCreated, o)
		p.mu.Unlock()
		p.logWrapped("created %s for %s (deleted at the end of the run)", o, m.Flag)
	})
	if err != nil {
		return err
	}
	timeout := p.s.ModeNetworkTimeout
	if timeout <= 0 {
		timeout = kube.DefaultModeNetworkTimeout
	}
	p.logWrapped("waiting up to %s for NetworkAttachmentDefinition %s (made from %s)", timeout, m.Network(ns), objs[len(objs)-1])
	return kube.WaitModeNetwork(ctx, p.objectStore(), p.nadStore(), *m, objs, ns, timeout)
}

// deleteModeObjects deletes the objects the run created for its mode (and nothing it found).
func (p *Platform) deleteModeObjects(ctx context.Context) error {
	p.mu.Lock()
	objs := p.modeCreated
	p.mu.Unlock()
	if len(objs) == 0 {
		return nil
	}
	if err := kube.DeleteModeObjects(ctx, p.objectStore(), objs); err != nil {
		return err
	}
	p.mu.Lock()
	p.modeCreated = nil
	p.mu.Unlock()
	return nil
}

// checkPrimaryLabel refuses an existing namespace for a primary UserDefinedNetwork unless it
// carries kube.PrimaryUDNLabel: OVN-Kubernetes takes the label only at the namespace's creation.
func (p *Platform) checkPrimaryLabel(ctx context.Context, ns string) error {
	m := p.s.NetworkMode
	if m == nil || !m.Primary() {
		return nil
	}
	got, err := p.cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("%s: read namespace %s: %w", m.Flag, ns, err)
	}
	if _, ok := got.Labels[kube.PrimaryUDNLabel]; !ok {
		return fmt.Errorf("%s: namespace %s exists without the label %s, and OVN-Kubernetes gives a primary UserDefinedNetwork "+
			"only to a namespace created with it: name a namespace that does not exist (-n), cnperf creates it labelled", m.Flag, ns, kube.PrimaryUDNLabel)
	}
	return nil
}
