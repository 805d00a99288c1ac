package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"path"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// NetworkDefinition is a NetworkAttachmentDefinition a run creates in its own namespace before
// the pods, measures on, and deletes at the end (k8s-netperf's --macvlan MASTER).
type NetworkDefinition struct {
	// Name is the definition's name in the run's namespace.
	Name string
	// Config is its spec.config: a CNI configuration (JSON).
	Config string
}

// k8s-netperf's --macvlan: the definition it creates (pkg/k8s/kubernetes.go, DeployNADMacvlan),
// by name, and its whereabouts range.
const (
	MacvlanDefinitionName = api.K8sNetperfMacvlanName
	DefaultMacvlanRange   = "192.168.200.0/24"
)

// WhereaboutsIPAM is the IPAM object k8s-netperf gives its macvlan definition: whereabouts on
// the range cidr (an IPv4 or IPv6 network in CIDR notation).
func WhereaboutsIPAM(cidr string) (string, error) {
	ip, n, err := net.ParseCIDR(strings.TrimSpace(cidr))
	if err != nil {
		return "", fmt.Errorf("%q is not a network in CIDR notation (e.g. %s)", cidr, DefaultMacvlanRange)
	}
	if !ip.Equal(n.IP) {
		return "", fmt.Errorf("%q has host bits set: the network is %s", cidr, n)
	}
	return fmt.Sprintf(`{"type": "whereabouts", "range": "%s"}`, n), nil
}

// MacvlanDefinition is the definition k8s-netperf's --macvlan MASTER creates, byte for byte but
// for the IPAM object ipam (JSON; WhereaboutsIPAM(DefaultMacvlanRange) is k8s-netperf's): a
// macvlan interface in bridge mode on each node's interface master.
func MacvlanDefinition(master, ipam string) (*NetworkDefinition, error) {
	if err := CheckInterfaceName(master); err != nil {
		return nil, err
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(ipam), &obj); err != nil {
		return nil, &IPAMError{fmt.Errorf("the IPAM configuration is not a JSON object: %w", err)}
	}
	if t, _ := obj["type"].(string); t == "" {
		return nil, &IPAMError{fmt.Errorf(`the IPAM configuration %s names no IPAM plugin (no "type")`, ipam)}
	}
	var compact bytes.Buffer
	_ = json.Compact(&compact, []byte(ipam)) // valid JSON, checked above
	if strings.HasPrefix(ipam, `{"type": "whereabouts", "range": `) {
		compact.Reset()
		compact.WriteString(ipam) // k8s-netperf's spelling, spaces and all
	}
	return &NetworkDefinition{Name: MacvlanDefinitionName, Config: fmt.Sprintf(
		`{"cniVersion": "0.3.1", "type": "macvlan", "master": "%s", "mode": "bridge", "ipam": %s}`, master, compact.String())}, nil
}

// IPAMError is MacvlanDefinition's error about its IPAM configuration (its other errors are
// about the master interface).
type IPAMError struct{ Err error }

func (e *IPAMError) Error() string { return e.Err.Error() }
func (e *IPAMError) Unwrap() error { return e.Err }

// IPAMOf is the IPAM plugin of a CNI configuration (a definition's spec.config: one plugin, or
// a list whose first plugin is the interface's): "" when it has none, so that the interface
// gets no address from it.
func IPAMOf(config string) (string, error) {
	type plugin struct {
		IPAM struct {
			Type string `json:"type"`
		} `json:"ipam"`
		Type string `json:"type"`
	}
	var conf struct {
		plugin
		Plugins []plugin `json:"plugins"`
	}
	if err := json.Unmarshal([]byte(config), &conf); err != nil {
		return "", fmt.Errorf("spec.config is not a CNI configuration (JSON): %w", err)
	}
	if conf.Type == "" && len(conf.Plugins) > 0 {
		conf.plugin = conf.Plugins[0]
	}
	return conf.IPAM.Type, nil
}

// ReadIPAM is the IPAM plugin of the definition of network (NAMESPACE/NAME; IPAMOf); an error
// when it cannot be read or has no spec.config (its configuration is on the nodes).
func ReadIPAM(ctx context.Context, nads NADStore, network string) (string, error) {
	ns, name, _ := strings.Cut(network, "/")
	raw, err := nads.Get(ctx, ns, name)
	if err != nil {
		return "", fmt.Errorf("network %s: read NetworkAttachmentDefinition: %w", network, err)
	}
	var nad struct {
		Spec struct {
			Config string `json:"config"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(raw, &nad); err != nil {
		return "", fmt.Errorf("network %s: the NetworkAttachmentDefinition is not JSON: %w", network, err)
	}
	if strings.TrimSpace(nad.Spec.Config) == "" {
		return "", fmt.Errorf("network %s: the definition has no spec.config (its configuration is on the nodes), so whether it has IPAM is unknown", network)
	}
	ipam, err := IPAMOf(nad.Spec.Config)
	if err != nil {
		return "", fmt.Errorf("network %s: %w", network, err)
	}
	return ipam, nil
}

// BridgeDefinitionName names the definition k8s-netperf's `--vm --bridge BRIDGE` creates for its VMs (pkg/k8s/
// kubernetes.go, DeployNADBridge): a bridge interface on the nodes' Linux bridge BRIDGE, no
// IPAM (its VMs set static addresses, bridgeNetwork.json's).
const BridgeDefinitionName = "br-netperf"

// BridgeDefinition is the definition k8s-netperf's --vm --bridge BRIDGE creates, its spec.config
// byte for byte, without its annotation k8s.v1.cni.cncf.io/resourceName:
// bridge.network.kubevirt.io/BRIDGE: KubeVirt's virt-controller turns that into a resource request
// of the launcher pods, which only nodes where KubeVirt's bridge-marker runs announce (on the e2e
// cluster, without it, both VMIs stayed Unschedulable: "Insufficient
// bridge.network.kubevirt.io/mbr0").
func BridgeDefinition(bridge string) (*NetworkDefinition, error) {
	if err := CheckInterfaceName(bridge); err != nil {
		return nil, err
	}
	return &NetworkDefinition{Name: BridgeDefinitionName,
		Config: `{"cniVersion": "0.3.1", "type": "bridge", "name": "br-netperf", "bridge": "` + bridge + `"}`}, nil
}

// CheckInterfaceName refuses what the kernel would not take as an interface name.
func CheckInterfaceName(s string) error {
	switch {
	case s == "":
		return errors.New("the master interface name is empty")
	case len(s) > 15:
		return fmt.Errorf("%q is not an interface name: longer than 15 characters", s)
	case s == "." || s == "..":
		return fmt.Errorf("%q is not an interface name", s)
	case strings.ContainsAny(s, "/:\"\\ \t\n"):
		return fmt.Errorf("%q is not an interface name: it holds '/', ':', a quote, a backslash or a space", s)
	}
	return nil
}

// nadBody is the definition as the API takes it, labelled with the run (so that what the run
// created is told apart from what it found).
func nadBody(ns, runID string, d *NetworkDefinition) ([]byte, error) {
	return json.Marshal(map[string]any{
		"apiVersion": NADGroup + "/v1",
		"kind":       "NetworkAttachmentDefinition",
		"metadata": map[string]any{
			"name": d.Name, "namespace": ns,
			"labels": map[string]string{LabelRun: runID, "app.kubernetes.io/managed-by": "cnperf"},
		},
		"spec": map[string]string{"config": d.Config},
	})
}

// CreateNetworkDefinition creates a run's own definition in namespace ns (after the namespace,
// before the pods). One that exists already is not the run's: it is neither used nor touched.
func CreateNetworkDefinition(ctx context.Context, nads NADStore, ns, runID string, d *NetworkDefinition) error {
	body, err := nadBody(ns, runID, d)
	if err != nil {
		return err
	}
	err = nads.Create(ctx, ns, body)
	switch {
	case apierrors.IsAlreadyExists(err):
		return fmt.Errorf("NetworkAttachmentDefinition %s/%s exists already and is not this run's: delete it, or measure on it with --network %s/%s",
			ns, d.Name, ns, d.Name)
	case err != nil:
		return fmt.Errorf("create NetworkAttachmentDefinition %s/%s: %w", ns, d.Name, err)
	}
	return nil
}

// DeleteNetworkDefinition deletes a definition the run created (gone already is no error).
func DeleteNetworkDefinition(ctx context.Context, nads NADStore, ns, name string) error {
	if err := nads.Delete(ctx, ns, name); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete NetworkAttachmentDefinition %s/%s: %w", ns, name, err)
	}
	return nil
}

// NetworkDefinitionCleanup is the command that deletes a run's definition by hand.
func NetworkDefinitionCleanup(ns, name string) string {
	return fmt.Sprintf("kubectl delete %s.%s %s -n %s", NADResource, NADGroup, name, ns)
}

// NADStore reads, lists, creates and deletes NetworkAttachmentDefinitions (the API's through the
// clientset's REST client, a test's in memory).
type NADStore interface {
	Get(ctx context.Context, namespace, name string) ([]byte, error)
	// List returns the metadata (name, namespace, labels) of the definitions in namespace ("":
	// every namespace) that selector selects; none when the API has no such resource (no
	// Multus CRD: there can be none).
	List(ctx context.Context, namespace, selector string) ([]metav1.ObjectMeta, error)
	Create(ctx context.Context, namespace string, body []byte) error
	Delete(ctx context.Context, namespace, name string) error
}

// RESTNADs goes through the clientset's REST client (the CRD has no typed client here; the
// group is not in the clientset).
type RESTNADs struct{ CS kubernetes.Interface }

func (r RESTNADs) store() restStore { return restStore{r.CS, "NetworkAttachmentDefinitions"} }

func nadPath(namespace string, name ...string) string {
	return path.Join(append([]string{"/apis", NADGroup, "v1", "namespaces", namespace, NADResource}, name...)...)
}

// List lists the definitions selector selects in namespace ("": all namespaces); none without
// the Multus CRD.
func (r RESTNADs) List(ctx context.Context, namespace, selector string) ([]metav1.ObjectMeta, error) {
	p := path.Join("/apis", NADGroup, "v1", NADResource)
	if namespace != "" {
		p = nadPath(namespace)
	}
	return listed(r.store().list(ctx, p, selector))
}

// Get reads a definition (the API's JSON).
func (r RESTNADs) Get(ctx context.Context, namespace, name string) ([]byte, error) {
	return r.store().get(ctx, nadPath(namespace, name))
}

// Create creates the definition body (JSON) in namespace.
func (r RESTNADs) Create(ctx context.Context, namespace string, body []byte) error {
	_, err := r.store().create(ctx, nadPath(namespace), body)
	return err
}

// Delete deletes a definition.
func (r RESTNADs) Delete(ctx context.Context, namespace, name string) error {
	return r.store().delete(ctx, nadPath(namespace, name))
}
