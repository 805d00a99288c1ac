package kube

import (
	"context"
	"fmt"
	"sort"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Access is one permission a feature needs: a verb on a resource (and subresource), in a
// namespace ("" for cluster-scoped resources), optionally on one named object.
type Access struct {
	Verb, Group, Resource, Subresource, Namespace, Name string
}

func (a Access) String() string {
	r := a.Resource
	if a.Subresource != "" {
		r += "/" + a.Subresource
	}
	if a.Group != "" {
		r += "." + a.Group
	}
	if a.Name != "" {
		r += " " + a.Name
	}
	if a.Namespace != "" {
		return fmt.Sprintf("%s %s in namespace %s", a.Verb, r, a.Namespace)
	}
	return fmt.Sprintf("%s %s (cluster-wide)", a.Verb, r)
}

// MissingPermissionsError lists what the caller may not do; nothing was created.
type MissingPermissionsError struct {
	Missing  []Access
	Manifest string // deploy/rbac/... that grants them
}

func (e *MissingPermissionsError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "missing permission")
	if len(e.Missing) > 1 {
		b.WriteString("s")
	}
	b.WriteString(" (checked with SelfSubjectAccessReview before creating anything; nothing was created): ")
	for i, m := range e.Missing {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(m.String())
	}
	if e.Manifest != "" {
		fmt.Fprintf(&b, " — %s grants what this needs (docs/kubernetes.md, Access and permissions)", e.Manifest)
	}
	return b.String()
}

// Preflight asks the API server, with one SelfSubjectAccessReview per permission, whether the
// caller may do each of needs, and returns a MissingPermissionsError naming every one it may
// not. It creates nothing in the cluster.
func Preflight(ctx context.Context, cs kubernetes.Interface, manifest string, needs []Access) error {
	var missing []Access
	seen := map[Access]bool{}
	for _, a := range needs {
		if seen[a] {
			continue
		}
		seen[a] = true
		r, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Verb: a.Verb, Group: a.Group, Resource: a.Resource, Subresource: a.Subresource, Namespace: a.Namespace, Name: a.Name}},
		}, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("check permission to %s: %w", a, err)
		}
		if !r.Status.Allowed {
			missing = append(missing, a)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	sort.SliceStable(missing, func(i, j int) bool { return missing[i].String() < missing[j].String() })
	return &MissingPermissionsError{Missing: missing, Manifest: manifest}
}

// Verbs expands one resource into an Access per verb.
func Verbs(ns, group, resource, sub string, vs ...string) []Access {
	out := make([]Access, len(vs))
	for i, v := range vs {
		out[i] = Access{Verb: v, Group: group, Resource: resource, Subresource: sub, Namespace: ns}
	}
	return out
}

// RunManifest is the RBAC manifest that grants RunAccess.
const RunManifest = "deploy/rbac/run.yaml"

// RunAccess is what `cnperf run --platform kube` needs in namespace ns (deploy/rbac/run.yaml):
// nodes to place endpoints, its namespace (created and deleted only when it is absent), pods
// with exec and logs, ServiceAccounts, Services when a path goes through one, events to report
// start-up failures, and its Lease. Cluster details (CNI, kube-proxy mode, Calico) are read
// when allowed and left empty otherwise, so they are not required.
func RunAccess(ns string, nsExists, services bool) []Access {
	a := nodesAndNamespace(ns, nsExists)
	a = append(a, Verbs(ns, "", "pods", "", "get", "list", "watch", "create", "delete", "deletecollection")...)
	a = append(a, Verbs(ns, "", "pods", "exec", "create")...)
	a = append(a, Verbs(ns, "", "pods", "log", "get")...)
	a = append(a, Verbs(ns, "", "events", "", "list", "watch")...)
	a = append(a, Verbs(ns, "", "serviceaccounts", "", "get", "list", "create", "delete")...)
	a = append(a, Verbs(ns, "", "secrets", "", "create", "delete")...) // the agent token's Secret
	a = append(a, Verbs(ns, "", "services", "", "list", "delete")...)
	if services {
		a = append(a, Verbs(ns, "", "services", "", "create")...)
	}
	a = append(a, Verbs(ns, "apps", "daemonsets", "", "list")...)
	a = append(a, Verbs(ns, "coordination.k8s.io", "leases", "", "get", "list", "create", "patch", "delete")...)
	return a
}

// nodesAndNamespace is what a run or a mesh needs outside its namespace ns: the nodes, and the
// namespace itself (created and deleted only when it is absent).
func nodesAndNamespace(ns string, nsExists bool) []Access {
	a := Verbs("", "", "nodes", "", "get", "list")
	a = append(a, Access{Verb: "get", Resource: "namespaces", Name: ns})
	if !nsExists {
		a = append(a, Access{Verb: "create", Resource: "namespaces"}, Access{Verb: "delete", Resource: "namespaces", Name: ns})
	}
	return a
}

// ProgrammingManifest is the RBAC manifest that grants ProgrammingAccess.
const ProgrammingManifest = "deploy/rbac/programming.yaml"

// ProgrammingAccess is what `cnperf programming` needs (deploy/rbac/programming.yaml): nodes
// to place the clients; in namespace ns only: the namespace itself (created and deleted only
// when absent), its pods with exec (the probes) and patch (an endpoint joins and leaves a
// Service by a label), events for start-up failures, the Services and NetworkPolicies it
// changes. Cluster details are read when allowed, so they are not required.
func ProgrammingAccess(ns string, nsExists bool) []Access {
	a := nodesAndNamespace(ns, nsExists)
	a = append(a, Verbs(ns, "", "pods", "", "get", "list", "watch", "create", "patch", "delete", "deletecollection")...)
	a = append(a, Verbs(ns, "", "pods", "exec", "create")...)
	a = append(a, Verbs(ns, "", "events", "", "list", "watch")...)
	a = append(a, Verbs(ns, "", "services", "", "get", "list", "create", "delete")...)
	a = append(a, Verbs(ns, "networking.k8s.io", "networkpolicies", "", "get", "list", "create", "delete", "deletecollection")...)
	return a
}

// FootprintManifest is the RBAC manifest that grants FootprintAccess.
const FootprintManifest = "deploy/rbac/idle-footprint.yaml"

// FootprintAccess is what --idle-footprint needs beside RunAccess
// (deploy/rbac/idle-footprint.yaml): the kubelets' stats summary through the API server's node
// proxy, get nodes/proxy. Optional: without it the footprint is left out with a warning.
func FootprintAccess() []Access {
	return Verbs("", "", "nodes", "proxy", "get")
}

// NetworksManifest is the RBAC manifest that grants NetworkAccess.
const NetworksManifest = "deploy/rbac/secondary-networks.yaml"

// NetworkAccess is what a run on a secondary network needs beside RunAccess
// (deploy/rbac/secondary-networks.yaml): reading its NetworkAttachmentDefinition, network
// NAMESPACE/NAME (in any namespace: the definition is often not in the run's).
func NetworkAccess(network string) []Access {
	ns, name, _ := strings.Cut(network, "/")
	return []Access{{Verb: "get", Group: "k8s.cni.cncf.io", Resource: "network-attachment-definitions", Namespace: ns, Name: name}}
}

// NetworkCreateAccess is what a run that creates its own secondary network needs beside
// RunAccess (k8s-netperf's --macvlan; deploy/rbac/secondary-networks.yaml): creating,
// reading and deleting a NetworkAttachmentDefinition in the run's namespace ns.
func NetworkCreateAccess(ns string) []Access {
	return Verbs(ns, "k8s.cni.cncf.io", "network-attachment-definitions", "", "create", "get", "delete")
}

// MeshManifest is the RBAC manifest that grants MeshAccess.
const MeshManifest = "deploy/rbac/mesh.yaml"

// MeshAccess is what `cnperf mesh` needs in namespace ns (deploy/rbac/mesh.yaml): nodes, its
// namespace (created and deleted only when absent), the agent DaemonSets, their pods with exec
// and logs, the all-to-one server pod, and its Lease.
func MeshAccess(ns string, nsExists bool) []Access {
	a := nodesAndNamespace(ns, nsExists)
	a = append(a, Verbs(ns, "apps", "daemonsets", "", "get", "list", "create", "update", "delete", "deletecollection")...)
	a = append(a, Verbs(ns, "", "pods", "", "get", "list", "create", "delete")...)
	a = append(a, Verbs(ns, "", "pods", "exec", "create")...)
	a = append(a, Verbs(ns, "", "secrets", "", "create", "delete")...) // the agent token's Secret
	a = append(a, Verbs(ns, "coordination.k8s.io", "leases", "", "get", "list", "create", "patch", "delete")...)
	return a
}

// TigerBenchManifest grants StandingAccess, StandingRemoveAccess and what tiger-bench's tests
// need (TigerBenchAccess); CalicoManifest what --allow-cluster-changes needs (CalicoAccess).
const (
	TigerBenchManifest = "deploy/rbac/tigerbench-load.yaml"
	CalicoManifest     = "deploy/rbac/calico.yaml"
)

// StandingAccess is what applying standing config (`cnperf load create`, each tiger-bench
// test) needs in namespace ns: nodes to spread it, the namespace (created only when absent),
// Deployments, Services and NetworkPolicies by server-side apply (patch, and create for a new
// object), listing and deleting what a previous test left beyond the wanted counts, and
// watching its pods come up.
func StandingAccess(ns string, nsExists bool) []Access {
	var a []Access
	a = append(a, Verbs("", "", "nodes", "", "get", "list")...)
	a = append(a, Access{Verb: "get", Resource: "namespaces", Name: ns})
	if !nsExists {
		a = append(a, Access{Verb: "create", Resource: "namespaces"})
	}
	a = append(a, Verbs(ns, "apps", "deployments", "", "get", "create", "patch", "delete")...)
	a = append(a, Verbs(ns, "", "services", "", "list", "create", "patch", "delete")...)
	a = append(a, Verbs(ns, "networking.k8s.io", "networkpolicies", "", "list", "create", "patch", "delete")...)
	a = append(a, Verbs(ns, "", "pods", "", "list")...)
	return a
}

// StandingRemoveAccess is what removing standing config (`cnperf load remove`, tiger-bench's
// clean-up) needs in ns: its objects, its pods gone, the Leases of runs that keep the
// namespace alive, and deleting the namespace when cnperf created it (deleteNamespace).
func StandingRemoveAccess(ns string, deleteNamespace bool) []Access {
	a := []Access{{Verb: "get", Resource: "namespaces", Name: ns}}
	if deleteNamespace {
		a = append(a, Access{Verb: "delete", Resource: "namespaces", Name: ns})
	}
	a = append(a, Verbs(ns, "apps", "deployments", "", "delete")...)
	a = append(a, Verbs(ns, "", "services", "", "list", "delete")...)
	a = append(a, Verbs(ns, "networking.k8s.io", "networkpolicies", "", "list", "delete")...)
	a = append(a, Verbs(ns, "", "pods", "", "list")...)
	a = append(a, Verbs(ns, "coordination.k8s.io", "leases", "", "list")...)
	return a
}

// TestPodAccess is what tiger-bench's TTFR and DNS tests need in ns: their pods, with logs,
// and (DNS) the Service of the target pods.
func TestPodAccess(ns string, services bool) []Access {
	a := Verbs(ns, "", "pods", "", "get", "list", "create", "delete")
	a = append(a, Verbs(ns, "", "pods", "log", "get")...)
	if services {
		a = append(a, Verbs(ns, "", "services", "", "list", "create", "delete")...)
	}
	return a
}

// CalicoAccess is what reconfiguring Calico (--allow-cluster-changes) needs: whichever of the
// operator's Installation and Calico's own resources the cluster has, so both are checked
// (deploy/rbac/calico.yaml grants both).
func CalicoAccess() []Access {
	var a []Access
	a = append(a, Verbs("", "operator.tigera.io", "installations", "", "get", "list", "update")...)
	a = append(a, Verbs("", "operator.tigera.io", "tigerstatuses", "", "get", "list")...)
	a = append(a, Verbs("", "crd.projectcalico.org", "ippools", "", "get", "list", "update")...)
	a = append(a, Verbs("", "crd.projectcalico.org", "felixconfigurations", "", "get", "list", "update")...)
	a = append(a, Access{Verb: "get", Group: "apps", Resource: "daemonsets", Namespace: "calico-system", Name: "calico-node"})
	for _, ns := range []string{"calico-system", "kube-system"} {
		a = append(a, Verbs(ns, "", "pods", "", "list", "deletecollection")...)
	}
	return a
}
