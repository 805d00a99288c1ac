package kubetest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// BridgeNAD is the e2e harness's bridge NetworkAttachmentDefinition (multus-e2e/e2e-bridge,
// test/e2e/harness/multus.sh) as the API server returns it.
const BridgeNAD = `{"apiVersion":"k8s.cni.cncf.io/v1","kind":"NetworkAttachmentDefinition",` +
	`"metadata":{"name":"e2e-bridge","namespace":"multus-e2e"},"spec":{"config":"{\"cniVersion\": \"0.3.1\", ` +
	`\"name\": \"e2e-bridge\", \"type\": \"bridge\", \"bridge\": \"mbr0\", \"mtu\": 1500, \"ipam\": {\"type\": \"whereabouts\", ` +
	`\"range\": \"10.125.0.0/24\"}}"}}`

// K8sNetperfMacvlanConfig is what k8s-netperf's DeployNADMacvlan (pkg/k8s/kubernetes.go)
// creates for --macvlan eth0.
const K8sNetperfMacvlanConfig = `{"cniVersion": "0.3.1", "type": "macvlan", "master": "eth0", "mode": "bridge", ` +
	`"ipam": {"type": "whereabouts", "range": "192.168.200.0/24"}}`

var nadResource = schema.GroupResource{Group: "k8s.cni.cncf.io", Resource: "network-attachment-definitions"}

// NADs keeps NetworkAttachmentDefinitions in memory, as the API server would (a kube.NADStore;
// Answer, when set, answers reads instead), and records what was created and deleted.
type NADs struct {
	mu sync.Mutex
	// Answer answers reads when set.
	Answer func(ctx context.Context, namespace, name string) ([]byte, error)
	// Objs are the definitions by NAMESPACE/NAME (their API JSON).
	Objs map[string][]byte
	// Created and Deleted are NAMESPACE/NAME of what was created and deleted, in order.
	Created, Deleted []string
}

// Get reads a definition.
func (m *NADs) Get(ctx context.Context, ns, name string) ([]byte, error) {
	if m.Answer != nil {
		return m.Answer(ctx, ns, name)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if b, ok := m.Objs[ns+"/"+name]; ok {
		return b, nil
	}
	return nil, apierrors.NewNotFound(nadResource, name)
}

// Create stores a definition (its body's metadata.namespace must be ns).
func (m *NADs) Create(_ context.Context, ns string, body []byte) error {
	var obj struct {
		Metadata struct{ Name, Namespace string } `json:"metadata"`
	}
	if err := json.Unmarshal(body, &obj); err != nil {
		return err
	}
	if obj.Metadata.Namespace != ns {
		return fmt.Errorf("namespace %q in the body, %q in the path", obj.Metadata.Namespace, ns)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	key := ns + "/" + obj.Metadata.Name
	if _, ok := m.Objs[key]; ok {
		return apierrors.NewAlreadyExists(nadResource, obj.Metadata.Name)
	}
	if m.Objs == nil {
		m.Objs = map[string][]byte{}
	}
	m.Objs[key] = body
	m.Created = append(m.Created, key)
	return nil
}

// List lists the definitions of namespace ns ("": all) that selector selects.
func (m *NADs) List(_ context.Context, ns, selector string) ([]metav1.ObjectMeta, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return selectMetas(m.Objs, selector, func(_ string, md metav1.ObjectMeta) bool { return ns == "" || md.Namespace == ns })
}

// Delete deletes a definition.
func (m *NADs) Delete(_ context.Context, ns, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := ns + "/" + name
	if _, ok := m.Objs[key]; !ok {
		return apierrors.NewNotFound(nadResource, name)
	}
	delete(m.Objs, key)
	m.Deleted = append(m.Deleted, key)
	return nil
}
