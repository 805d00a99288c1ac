package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/text"
)

// What a run with one of k8s-netperf's network modes does around its pods: create the mode's
// objects (CreateModeObjects), wait for the NetworkAttachmentDefinition OVN-Kubernetes or the
// SR-IOV Network Operator generates from them (WaitModeNetwork), measure on that definition as
// on any --network (the same path-table row and network-status reading), and delete what it
// created (DeleteModeObjects).

// Network is the NetworkAttachmentDefinition (NAMESPACE/NAME) the mode's network appears as in
// the run's namespace ns, as OVN-Kubernetes and the SR-IOV operator name it: a
// (Cluster)UserDefinedNetwork's definition has the network's name in each namespace it selects
// (k8s-netperf reads the pod's address under ns/NAME, ExtractUdnIp), an SriovNetwork's is made in
// its networkNamespace under its own name (k8s-netperf's WaitForSriovNad).
func (m NetworkMode) Network(ns string) string {
	switch m.Kind {
	case ModeUDN:
		return ns + "/" + UDNName
	case ModeCUDN:
		return ns + "/" + CUDNName
	case ModeLocalnet:
		return ns + "/" + LocalnetCUDNName
	case ModeSRIOV:
		return ns + "/" + SRIOVNetworkName
	}
	return ""
}

// Primary says the mode's network replaces the pods' default network (a primary
// UserDefinedNetwork: OVN-Kubernetes attaches every pod of the namespace to it without a
// k8s.v1.cni.cncf.io/networks annotation, and reports its address in k8s.ovn.org/pod-networks).
func (m NetworkMode) Primary() bool { return m.Kind == ModeUDN }

// SRIOVResource is the extended resource a pod on --sriov PF requests, one VF (k8s-netperf's
// BuildSUT: openshift.io/PF, the operator's default resource prefix and the policy's
// resourceName); "" for the other modes.
func (m NetworkMode) SRIOVResource() string {
	if m.Kind != ModeSRIOV {
		return ""
	}
	return "openshift.io/" + m.PF
}

// OVN-Kubernetes's condition on a (Cluster)UserDefinedNetwork once it made the network's
// NetworkAttachmentDefinition (go-controller/pkg/clustermanager/userdefinednetwork).
const ovnConditionNetworkCreated = "NetworkCreated"

// DefaultModeNetworkTimeout is how long a run waits for the definition OVN-Kubernetes or the
// SR-IOV operator generates (k8s-netperf's WaitForSriovNad waits 120 s).
const DefaultModeNetworkTimeout = 2 * time.Minute

// ObjectStore creates, reads and deletes API objects by path (a NetworkObject's collection,
// Path, and Path/NAME): the API's through the clientset's REST client, a test's in memory.
type ObjectStore interface {
	Create(ctx context.Context, collection string, body []byte) error
	Get(ctx context.Context, path string) ([]byte, error)
	Delete(ctx context.Context, path string) error
	// List returns the metadata of the objects of collection that selector selects; none when
	// the API does not serve the collection (its CRD is not installed: there can be none).
	List(ctx context.Context, collection, selector string) ([]metav1.ObjectMeta, error)
}

// RESTObjects is ObjectStore through the clientset's REST client (these kinds have no typed
// client here).
type RESTObjects RESTNADs

func (r RESTObjects) store() restStore { return restStore{cs: r.CS} } // each path names its resource

// Create posts body to collection.
func (r RESTObjects) Create(ctx context.Context, collection string, body []byte) error {
	_, err := r.store().create(ctx, collection, body)
	return err
}

// Get reads the object at path.
func (r RESTObjects) Get(ctx context.Context, path string) ([]byte, error) {
	return r.store().get(ctx, path)
}

// Delete deletes the object at path.
func (r RESTObjects) Delete(ctx context.Context, path string) error {
	return r.store().delete(ctx, path)
}

// List lists the objects of collection that selector selects; none without their CRD.
func (r RESTObjects) List(ctx context.Context, collection, selector string) ([]metav1.ObjectMeta, error) {
	return listed(r.store().list(ctx, collection, selector))
}

// ObjectPath is the object's own path in the API.
func (o NetworkObject) ObjectPath() string { return o.Path() + "/" + o.Name() }

// CreateModeObjects creates objs in order; created is called for each one the API accepted
// (so that the caller deletes it whatever happens next). One that exists already is not the
// run's: the run stops, naming it, and leaves it alone.
func CreateModeObjects(ctx context.Context, st ObjectStore, objs []NetworkObject, created func(NetworkObject)) error {
	for _, o := range objs {
		body, err := json.Marshal(o.Object)
		if err != nil {
			return err
		}
		err = st.Create(ctx, o.Path(), body)
		switch {
		case apierrors.IsAlreadyExists(err):
			return fmt.Errorf("%s exists already and is not this run's (k8s-netperf's name; a run, or k8s-netperf, left it?): delete it first", o)
		case err != nil:
			return fmt.Errorf("create %s: %s", o, firstLine(err))
		}
		created(o)
	}
	return nil
}

// DeleteModeObjects deletes objs, the last first (gone already is no error).
func DeleteModeObjects(ctx context.Context, st ObjectStore, objs []NetworkObject) error {
	var errs []error
	for i := len(objs) - 1; i >= 0; i-- {
		if err := st.Delete(ctx, objs[i].ObjectPath()); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete %s: %s", objs[i], firstLine(err)))
		}
	}
	return errors.Join(errs...)
}

// ModeObjectsCleanup is the command that deletes objs by hand.
func ModeObjectsCleanup(objs []NetworkObject) string {
	var cmds []string
	for _, o := range objs {
		c := fmt.Sprintf("kubectl delete %s.%s %s", o.Resource, o.Group, o.Name())
		if o.Namespace != "" {
			c += " -n " + o.Namespace
		}
		cmds = append(cmds, c)
	}
	return strings.Join(cmds, "; ")
}

// objectConditions are an object's status conditions as "TYPE=STATUS (REASON: MESSAGE)", and
// whether condition want is True.
func objectConditions(raw []byte, want string) (conds []string, ok bool) {
	var obj struct {
		Status struct {
			Conditions []struct {
				Type, Status, Reason, Message string
			} `json:"conditions"`
		} `json:"status"`
	}
	if json.Unmarshal(raw, &obj) != nil {
		return nil, false
	}
	for _, c := range obj.Status.Conditions {
		s := c.Type + "=" + c.Status
		if c.Reason != "" || c.Message != "" {
			s += " (" + strings.TrimSuffix(c.Reason+": "+c.Message, ": ") + ")"
		}
		conds = append(conds, s)
		ok = ok || (c.Type == want && c.Status == "True")
	}
	return conds, ok
}

// WaitModeNetwork waits, at most timeout, until the network of m that objs (its objects, as
// created) make exists in the run's namespace ns: the NetworkAttachmentDefinition Network(ns)
// and, for a (Cluster)UserDefinedNetwork, its NetworkCreated condition True (OVN-Kubernetes sets
// it once the definition is made, False with its reason when it cannot). The error names the
// object that should have made it, the definition, and the object's status conditions as they
// were last read.
func WaitModeNetwork(ctx context.Context, st ObjectStore, nads NADStore, m NetworkMode, objs []NetworkObject, ns string, timeout time.Duration) error {
	if len(objs) == 0 {
		return errors.New("no objects to wait for")
	}
	maker := objs[len(objs)-1] // the UDN, the CUDN, the SriovNetwork (after its policy)
	network := m.Network(ns)
	nadNS, nadName, _ := strings.Cut(network, "/")
	condition := ""
	if m.Kind != ModeSRIOV {
		condition = ovnConditionNetworkCreated
	}
	var conds []string
	var nadErr, objErr error
	done := func(ctx context.Context) (bool, error) {
		raw, err := st.Get(ctx, maker.ObjectPath())
		objErr = err
		made := err == nil
		if made {
			var ok bool
			conds, ok = objectConditions(raw, condition)
			made = condition == "" || ok
		}
		_, nadErr = nads.Get(ctx, nadNS, nadName)
		return made && nadErr == nil, nil
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := wait.PollUntilContextCancel(wctx, time.Second, true, done)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	who := "OVN-Kubernetes"
	if m.Kind == ModeSRIOV {
		who = "the SR-IOV Network Operator"
	}
	var why []string
	switch {
	case objErr != nil:
		why = append(why, fmt.Sprintf("reading %s failed: %v", maker, firstLine(objErr)))
	case len(conds) == 0:
		why = append(why, maker.String()+" has no status conditions (is "+who+"'s controller running?)")
	default:
		why = append(why, maker.String()+"'s status conditions: "+strings.Join(conds, ", "))
	}
	switch {
	case nadErr == nil:
		why = append(why, "NetworkAttachmentDefinition "+network+" exists")
	case apierrors.IsNotFound(nadErr):
		why = append(why, "NetworkAttachmentDefinition "+network+" does not exist")
	case nadErr != nil:
		why = append(why, fmt.Sprintf("reading NetworkAttachmentDefinition %s failed: %v", network, firstLine(nadErr)))
	}
	want := "NetworkAttachmentDefinition " + network
	if condition != "" {
		want += " and condition " + condition + "=True"
	}
	// the caller prefixes "set up the kube platform: ", so the first line stays short
	msg := fmt.Sprintf("%s did not make %s within %s; %s", who, want, timeout, strings.Join(why, "; "))
	return errors.New(m.Flag + ": the network was not made:\n" + strings.Join(text.Wrap(msg, modeMessageWidth, "  ", "  "), "\n"))
}

// Info is m as a result names it, with the objects the run created for it.
func (m NetworkMode) Info(objs []NetworkObject) *api.NetworkMode {
	info := &api.NetworkMode{Flag: m.Flag, Kind: m.Kind, Primary: m.Primary()}
	switch m.Kind {
	case ModeUDN:
		info.Value = strings.ToLower(m.Topology)
	case ModeCUDN:
		info.Value = strings.TrimSpace(strings.TrimPrefix(m.Flag, "--cudn")) // as given, as k8s-netperf writes it
	case ModeLocalnet:
		info.Value = m.PhysicalNetwork
	case ModeSRIOV:
		info.Value = m.PF
	}
	for _, o := range objs {
		info.Objects = append(info.Objects, o.String())
	}
	return info
}

// AnnotationOVNPodNetworks is OVN-Kubernetes's pod annotation: the pod's addresses on each of
// its OVN networks, by NAMESPACE/NAME ("default" for the cluster's own).
const AnnotationOVNPodNetworks = "k8s.ovn.org/pod-networks"

// PrimaryAddressOf is a pod's address of the family ("" = the first) on its primary
// UserDefinedNetwork network (NAMESPACE/NAME), read where k8s-netperf reads it (ExtractUdnIp):
// the ip_addresses (CIDR) of the network's entry in k8s.ovn.org/pod-networks. The pod's own
// status.podIP stays its address on the cluster's default network.
func PrimaryAddressOf(pod *corev1.Pod, network, family string) (string, error) {
	raw, ok := pod.Annotations[AnnotationOVNPodNetworks]
	if !ok {
		return "", fmt.Errorf("pod %s has no %s annotation: OVN-Kubernetes did not attach it to %s", pod.Name, AnnotationOVNPodNetworks, network)
	}
	var nets map[string]struct {
		IPAddresses []string `json:"ip_addresses"`
		Role        string   `json:"role"`
	}
	if err := json.Unmarshal([]byte(raw), &nets); err != nil {
		return "", fmt.Errorf("pod %s: %s is not JSON: %w", pod.Name, AnnotationOVNPodNetworks, err)
	}
	n, ok := nets[network]
	if !ok {
		names := make([]string, 0, len(nets))
		for k := range nets {
			names = append(names, k)
		}
		sort.Strings(names)
		return "", fmt.Errorf("pod %s is not on %s (its %s names %s)", pod.Name, network, AnnotationOVNPodNetworks, strings.Join(names, ", "))
	}
	var ips []string
	for _, c := range n.IPAddresses {
		ip, _, err := net.ParseCIDR(c)
		if err != nil {
			return "", fmt.Errorf("pod %s: %s: %q of %s is not an address in CIDR notation", pod.Name, AnnotationOVNPodNetworks, c, network)
		}
		ips = append(ips, ip.String())
	}
	if ip := PickIP(ips, family); ip != "" {
		return ip, nil
	}
	return "", fmt.Errorf("pod %s has no %s address on %s (addresses %s)", pod.Name, FamilyName(family), network, strings.Join(n.IPAddresses, ", "))
}

// modeKinds are the kinds of objects k8s-netperf's network modes make a run create
// (NetworkMode.Objects), for `cnperf cleanup`, in namespace ns ("": everywhere): the
// UserDefinedNetworks in it, the ClusterUserDefinedNetworks (cluster-scoped: only when ns is
// ""), the SriovNetworks and SriovNetworkNodePolicies (in the operator's namespace: when ns is ""
// or that one). Each is deleted by its own path; none is listed where its CRD is not installed.
func modeKinds(st ObjectStore, ns string) []runKind {
	kind := func(k, noun, nouns, group, resource, listNS string, namespaced bool) runKind {
		collection := func(n string) string {
			if !namespaced || n == "" {
				return "/apis/" + group + "/v1/" + resource
			}
			return "/apis/" + group + "/v1/namespaces/" + n + "/" + resource
		}
		return runKind{kind: k, noun: noun, nouns: nouns,
			list: func(ctx context.Context, lo metav1.ListOptions) ([]metav1.ObjectMeta, error) {
				return st.List(ctx, collection(listNS), lo.LabelSelector)
			},
			del: func(ctx context.Context, name string, _ metav1.DeleteOptions) error {
				return st.Delete(ctx, collection(ns)+"/"+name)
			},
		}
	}
	kinds := []runKind{kind("UserDefinedNetwork", "user-defined network", "user-defined networks", ovnGroup, "userdefinednetworks", ns, true)}
	if ns == "" {
		kinds = append(kinds, kind("ClusterUserDefinedNetwork", "cluster user-defined network", "cluster user-defined networks",
			ovnGroup, "clusteruserdefinednetworks", "", false))
	}
	if ns == "" || ns == SRIOVOperatorNamespace {
		kinds = append(kinds,
			kind("SriovNetwork", "SR-IOV network", "SR-IOV networks", sriovGroup, "sriovnetworks", SRIOVOperatorNamespace, true),
			kind("SriovNetworkNodePolicy", "SR-IOV network node policy", "SR-IOV network node policies", sriovGroup,
				"sriovnetworknodepolicies", SRIOVOperatorNamespace, true))
	}
	return kinds
}

// NetworkModesManifest is the RBAC manifest that grants ModeAccess.
const NetworkModesManifest = "deploy/rbac/network-modes.yaml"

// ModeAccess is what a run with mode m in namespace ns needs beside RunAccess and NetworkAccess
// (deploy/rbac/network-modes.yaml): creating, reading and deleting the mode's objects where they
// live (NetworkMode.Objects), and what the preflight reads: OVN-Kubernetes's node agents (pods
// in every namespace), the SR-IOV operator's pod, configuration and node states.
func ModeAccess(m NetworkMode, ns string) []Access {
	var out []Access
	switch m.Kind {
	case ModeUDN:
		out = Verbs(ns, ovnGroup, "userdefinednetworks", "", "create", "get", "delete")
	case ModeCUDN, ModeLocalnet:
		out = Verbs("", ovnGroup, "clusteruserdefinednetworks", "", "create", "get", "delete")
	case ModeSRIOV:
		op := SRIOVOperatorNamespace
		out = slices.Concat(Verbs(op, sriovGroup, "sriovnetworknodepolicies", "", "create", "get", "delete"),
			Verbs(op, sriovGroup, "sriovnetworks", "", "create", "get", "delete"),
			Verbs(op, sriovGroup, "sriovoperatorconfigs", "", "get"), Verbs(op, sriovGroup, "sriovnetworknodestates", "", "get"),
			Verbs(op, "", "pods", "", "list"))
	}
	if m.Kind != ModeSRIOV {
		out = append(out, Verbs("", "", "pods", "", "list")...)
	}
	return out
}
