package kube

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"path"
	"reflect"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/cnperf/cnperf/internal/kube"
)

// NetworkDefinition is a NetworkAttachmentDefinition the run creates in its own namespace before
// the pods, measures on, and deletes at the end (k8s-netperf's --macvlan MASTER). The run's
// cases name it as their network, NAMESPACE/Name.
type NetworkDefinition struct {
	// Name is the definition's name in the run's namespace.
	Name string
	// Config is its spec.config: a CNI configuration (JSON).
	Config string
}

// NetworkOf is the network (NAMESPACE/NAME) a run with these options measures on when it creates
// d: d in the servers' namespace.
func (o Options) NetworkOf(d *NetworkDefinition) string {
	return cmp.Or(o.ServerNamespace, o.Namespace, DefaultNamespace) + "/" + d.Name
}

// k8s-netperf's --macvlan: the definition it creates (pkg/k8s/kubernetes.go, DeployNADMacvlan),
// by name, and its whereabouts range.
const (
	MacvlanDefinitionName = "macvlan-netperf"
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
	if err := checkInterfaceName(master); err != nil {
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

// checkInterfaceName refuses what the kernel would not take as an interface name.
func checkInterfaceName(s string) error {
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
		"apiVersion": nadGroup + "/v1",
		"kind":       "NetworkAttachmentDefinition",
		"metadata": map[string]any{
			"name": d.Name, "namespace": ns,
			"labels": map[string]string{kube.LabelRun: runID, "app.kubernetes.io/managed-by": "cnperf"},
		},
		"spec": map[string]string{"config": d.Config},
	})
}

// nadStore reads, creates and deletes NetworkAttachmentDefinitions (the platform's through the
// clientset's REST client, a test's in memory).
type nadStore interface {
	Get(ctx context.Context, namespace, name string) ([]byte, error)
	Create(ctx context.Context, namespace string, body []byte) error
	Delete(ctx context.Context, namespace, name string) error
}

// restNADs goes through the clientset's REST client (the CRD has no typed client here; the
// group is not in the clientset).
type restNADs struct{ cs kubernetes.Interface }

func (r restNADs) rest() (rest.Interface, error) {
	rc := r.cs.CoreV1().RESTClient()
	if rc == nil || reflect.ValueOf(rc).IsNil() {
		return nil, errors.New("no REST client to reach NetworkAttachmentDefinitions with")
	}
	return rc, nil
}

func nadPath(namespace string, name ...string) string {
	return path.Join(append([]string{"/apis", nadGroup, "v1", "namespaces", namespace, nadResource}, name...)...)
}

func (r restNADs) Get(ctx context.Context, namespace, name string) ([]byte, error) {
	rc, err := r.rest()
	if err != nil {
		return nil, err
	}
	return rc.Get().AbsPath(nadPath(namespace, name)).DoRaw(ctx)
}

func (r restNADs) Create(ctx context.Context, namespace string, body []byte) error {
	rc, err := r.rest()
	if err != nil {
		return err
	}
	_, err = rc.Post().AbsPath(nadPath(namespace)).SetHeader("Content-Type", "application/json").Body(body).DoRaw(ctx)
	return err
}

func (r restNADs) Delete(ctx context.Context, namespace, name string) error {
	rc, err := r.rest()
	if err != nil {
		return err
	}
	_, err = rc.Delete().AbsPath(nadPath(namespace, name)).DoRaw(ctx)
	return err
}

// nadStore is the platform's (a test may have set its own).
func (p *Platform) nadStore() nadStore {
	if p.nads == nil {
		return restNADs{p.cs}
	}
	return p.nads
}

// createDefinition creates the run's own definition in its namespace (after the namespace,
// before the pods). One that exists already is not the run's: it is neither used nor touched.
func (p *Platform) createDefinition(ctx context.Context, d *NetworkDefinition) error {
	body, err := nadBody(p.s.serverNamespace(), p.runID, d)
	if err != nil {
		return err
	}
	err = p.nadStore().Create(ctx, p.s.serverNamespace(), body)
	switch {
	case apierrors.IsAlreadyExists(err):
		return fmt.Errorf("NetworkAttachmentDefinition %s/%s exists already and is not this run's: delete it, or measure on it with --network %s/%s",
			p.s.serverNamespace(), d.Name, p.s.serverNamespace(), d.Name)
	case err != nil:
		return fmt.Errorf("create NetworkAttachmentDefinition %s/%s: %w", p.s.serverNamespace(), d.Name, err)
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
	name := p.s.CreateNetwork.Name
	if err := p.nadStore().Delete(ctx, p.s.serverNamespace(), name); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete NetworkAttachmentDefinition %s/%s: %w", p.s.serverNamespace(), name, err)
	}
	p.mu.Lock()
	p.definitionCreated = false
	p.mu.Unlock()
	return nil
}
