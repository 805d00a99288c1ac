package kube

import (
	"cmp"
	"context"

	"github.com/cnperf/cnperf/internal/kube"
)

// NetworkOf is the network (NAMESPACE/NAME) a run with these options measures on when it creates
// d: d in the servers' namespace.
func (o Options) NetworkOf(d *kube.NetworkDefinition) string {
	return cmp.Or(o.ServerNamespace, o.Namespace, DefaultNamespace) + "/" + d.Name
}

// nadStore is the platform's (a test may have set its own).
func (p *Platform) nadStore() kube.NADStore {
	if p.nads == nil {
		return kube.RESTNADs{CS: p.cs}
	}
	return p.nads
}

// createDefinition creates the run's own definition in its namespace (after the namespace,
// before the pods; kube.CreateNetworkDefinition).
func (p *Platform) createDefinition(ctx context.Context, d *kube.NetworkDefinition) error {
	if err := kube.CreateNetworkDefinition(ctx, p.nadStore(), p.s.serverNamespace(), p.runID, d); err != nil {
		return err
	}
	p.mu.Lock()
	p.definitionCreated = true
	p.mu.Unlock()
	// wrapped: the configuration alone is about 150 columns
	p.logWrapped("created NetworkAttachmentDefinition %s/%s (deleted at the end of the run): %s", p.s.serverNamespace(), d.Name, d.Config)
	return nil
}

// deleteDefinition deletes the definition the run created (and nothing it found).
func (p *Platform) deleteDefinition(ctx context.Context) error {
	p.mu.Lock()
	created := p.definitionCreated
	p.mu.Unlock()
	if !created || p.s.CreateNetwork == nil {
		return nil
	}
	if err := kube.DeleteNetworkDefinition(ctx, p.nadStore(), p.s.serverNamespace(), p.s.CreateNetwork.Name); err != nil {
		return err
	}
	p.mu.Lock()
	p.definitionCreated = false
	p.mu.Unlock()
	return nil
}
