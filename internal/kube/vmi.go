package kube

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"path"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// KubeVirt's API: VirtualMachineInstances, the VMs cnperf runs as endpoints (--vm).
const (
	KubeVirtGroup   = "kubevirt.io"
	KubeVirtVersion = "v1"
	VMIResource     = "virtualmachineinstances"
	// VMICRD is the CustomResourceDefinition that serves them.
	VMICRD = VMIResource + "." + KubeVirtGroup
	// LabelVMIName is the label KubeVirt puts on a VMI's virt-launcher pod (the VMI's name).
	LabelVMIName = "vm.kubevirt.io/name"
	// LauncherComputeContainer is the virt-launcher pod's container that runs QEMU; the guest's
	// serial console is logged by its guest-console-log container.
	LauncherComputeContainer = "compute"
	LauncherConsoleContainer = "guest-console-log"
	// VMsManifest is the RBAC manifest that grants VMAccess.
	VMsManifest = "deploy/rbac/vms.yaml"
)

// VM bindings: how the guest's interface is joined to the pod network.
const (
	BindingMasquerade = "masquerade" // NAT in the launcher pod: the guest has a private address, the pod's is forwarded
	BindingBridge     = "bridge"     // the pod's interface bridged to the guest: the guest has the pod's address
	// passt (KubeVirt's feature gate Passt): a user-space process in the launcher pod (passt)
	// carries the guest's frames over the pod's own sockets; the guest has the pod's address
	BindingPasst = "passt"
)

// Bindings are the bindings cnperf builds, the default first.
var Bindings = []string{BindingMasquerade, BindingBridge, BindingPasst}

// VMOptions describe one VirtualMachineInstance endpoint: the cnperf guest (a kernel and an
// initramfs whose /init runs `cnperf agent serve --exec-port`, from a container image, booted with
// spec.domain.firmware.kernelBoot), its CPU topology, memory and pod-network binding.
type VMOptions struct {
	Name, Namespace string
	Labels          map[string]string
	Annotations     map[string]string
	Nodes           []string // pinned through the scheduler (NodesAffinity), as pods are
	Tolerations     []corev1.Toleration
	// Image is the guest image: /boot/vmlinuz and /boot/initramfs.img (test/e2e/harness/kubevirt.sh builds it).
	Image      string
	PullPolicy corev1.PullPolicy
	Binding    string
	Sockets    int
	Cores      int
	Threads    int
	Memory     resource.Quantity
	// TokenSecret names the run's token Secret (TokenSecretName, in Namespace): KubeVirt hands
	// it to the guest as a read-only disk (a `secret` volume, an ISO 9660 image whose file
	// TokenSecretKey holds the token) with the serial GuestTokenSerial, which the guest's /init
	// mounts; the token is nowhere in the VMI. Its data port is fixed (cnperf.data_port= on the
	// kernel command line).
	TokenSecret string
	DataPort    int
	// Ports are the guest's ports the passt binding forwards from the pod's address (the VMI
	// interface's ports): KubeVirt's passt forwards every TCP and UDP port when none is named,
	// a socket per port (about 131,000 open files, more than a container may open where its
	// RLIMIT_NOFILE is lower: passt then exits "Can't open enough sockets for port specifier:
	// all" and the VMI fails). The other bindings forward every port without a socket each.
	Ports []VMPort
	// Secondary, when set, puts the VM on a secondary network as well (a Multus
	// NetworkAttachmentDefinition): a second interface with KubeVirt's bridge binding.
	Secondary *VMSecondary
}

// VMSecondary is a VM's interface on a secondary network. KubeVirt's bridge binding moves the
// launcher pod's interface on it into the guest; when the definition has IPAM, KubeVirt serves
// the pod interface's address to the guest by DHCP (and keeps it on a dummy link in the pod:
// virt-handler's BridgePodNetworkConfigurator, pkg/network/infraconfigurators/bridge.go in
// v1.0.1, creates the dummy only when the pod interface has an IPv4 address); without IPAM it
// serves none, and the guest sets Address itself.
type VMSecondary struct {
	Network string // NAMESPACE/NAME of the NetworkAttachmentDefinition
	// MAC is the interface's MAC address: how the guest's /init finds the NIC Address is for
	// (kernel argument cnperf.static=MAC,ADDRESS).
	MAC string
	// Address is the guest's address on it (CIDR); "" when the definition's IPAM gives one
	// (the guest asks DHCP on every NIC).
	Address string
}

// SecondaryMAC is the MAC address a VM's secondary interface gets: locally administered and
// unicast (02:...), the rest from the hash of the VMI's name, so that it is the same for a
// name and differs between the run's VMs.
func SecondaryMAC(vmi string) string {
	h := sha256.Sum256([]byte(vmi))
	return fmt.Sprintf("02:%02x:%02x:%02x:%02x:%02x", h[0], h[1], h[2], h[3], h[4])
}

// SecondaryInterface names the secondary network's interface and network in a VMI.
const SecondaryInterface = "secondary"

// VMPort is a guest port (a VMI interface's ports[] entry).
type VMPort struct {
	Port     int
	Protocol string // TCP or UDP
}

// GuestTokenSerial is the serial of the token disk: how the guest's /init finds it
// (/sys/block/vd*/serial; test/e2e/harness/kubevirt/guest-init).
const GuestTokenSerial = "cnperf-token"

// guestTokenVolume names the token disk and its volume in the VMI.
const guestTokenVolume = "cnperf-token"

// Guest image paths.
const (
	GuestKernelPath = "/boot/vmlinuz"
	GuestInitrdPath = "/boot/initramfs.img"
)

// VCPUs is the guest's CPU count.
func (o VMOptions) VCPUs() int { return max(o.Sockets, 1) * max(o.Cores, 1) * max(o.Threads, 1) }

// VMI builds the VirtualMachineInstance object (kubevirt.io/v1).
func (o VMOptions) VMI() map[string]any {
	iface := map[string]any{"name": "default", o.Binding: map[string]any{}}
	if o.Binding == BindingPasst && len(o.Ports) > 0 {
		var ports []any
		for _, p := range o.Ports {
			ports = append(ports, map[string]any{"port": p.Port, "protocol": p.Protocol})
		}
		iface["ports"] = ports
	}
	args := []string{"console=ttyS0", "panic=-1", "quiet"}
	if o.DataPort > 0 {
		args = append(args, fmt.Sprintf("cnperf.data_port=%d", o.DataPort))
	}
	ifaces := []any{iface}
	networks := []any{map[string]any{"name": "default", "pod": map[string]any{}}}
	if sec := o.Secondary; sec != nil {
		si := map[string]any{"name": SecondaryInterface, BindingBridge: map[string]any{}}
		if sec.MAC != "" {
			si["macAddress"] = sec.MAC
		}
		ifaces = append(ifaces, si)
		networks = append(networks, map[string]any{"name": SecondaryInterface, "multus": map[string]any{"networkName": sec.Network}})
		if sec.Address != "" && sec.MAC != "" {
			args = append(args, "cnperf.static="+sec.MAC+","+sec.Address)
		}
	}
	spec := map[string]any{
		"terminationGracePeriodSeconds": 0,
		"domain": map[string]any{
			"cpu":       map[string]any{"sockets": max(o.Sockets, 1), "cores": max(o.Cores, 1), "threads": max(o.Threads, 1)},
			"resources": map[string]any{"requests": map[string]any{"memory": o.Memory.String()}},
			"firmware": map[string]any{"kernelBoot": map[string]any{
				"kernelArgs": strings.Join(args, " "),
				"container": map[string]any{"image": o.Image, "imagePullPolicy": string(o.PullPolicy),
					"kernelPath": GuestKernelPath, "initrdPath": GuestInitrdPath},
			}},
			"devices": map[string]any{"interfaces": ifaces,
				"disks": []any{map[string]any{"name": guestTokenVolume, "serial": GuestTokenSerial, "disk": map[string]any{"bus": "virtio"}}}},
		},
		"networks": networks,
		"volumes":  []any{map[string]any{"name": guestTokenVolume, "secret": map[string]any{"secretName": o.TokenSecret}}},
	}
	if a := NodesAffinity(o.Nodes); a != nil {
		spec["affinity"] = toMap(a)
	}
	if len(o.Tolerations) > 0 {
		spec["tolerations"] = toMap(o.Tolerations)
	}
	meta := map[string]any{"name": o.Name, "namespace": o.Namespace}
	if len(o.Labels) > 0 {
		meta["labels"] = o.Labels
	}
	if len(o.Annotations) > 0 {
		meta["annotations"] = o.Annotations
	}
	return map[string]any{"apiVersion": KubeVirtGroup + "/" + KubeVirtVersion, "kind": "VirtualMachineInstance", "metadata": meta, "spec": spec}
}

// toMap turns a typed object into its JSON form as maps.
func toMap(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// VMIStatus is what cnperf reads of a VMI's status.
type VMIStatus struct {
	Name       string
	UID        string
	Phase      string // Pending, Scheduling, Scheduled, Running, Succeeded, Failed
	Node       string
	IP         string // the first interface's address: the pod's (masquerade, bridge)
	IPs        []string
	Conditions []VMICondition
}

// VMICondition is one of a VMI's status conditions.
type VMICondition struct{ Type, Status, Reason, Message string }

// Why is what the conditions say is wrong ("" when none is false with a message).
func (s VMIStatus) Why() string {
	var out []string
	for _, c := range s.Conditions {
		// LiveMigratable says only whether the VMI could move, not why it does not run
		if c.Status == "False" && c.Type != "LiveMigratable" && (c.Reason != "" || c.Message != "") {
			out = append(out, strings.TrimSpace(c.Type+": "+c.Reason+" "+c.Message))
		}
	}
	return strings.Join(out, "; ")
}

// ParseVMIStatus reads a VMI (the API's JSON).
func ParseVMIStatus(raw []byte) (VMIStatus, error) {
	var v struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
		Status   struct {
			Phase      string `json:"phase"`
			NodeName   string `json:"nodeName"`
			Interfaces []struct {
				IPAddress   string   `json:"ipAddress"`
				IPAddresses []string `json:"ipAddresses"`
			} `json:"interfaces"`
			Conditions []struct {
				Type, Status, Reason, Message string
			} `json:"conditions"`
		} `json:"status"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return VMIStatus{}, fmt.Errorf("the VirtualMachineInstance is not JSON: %w", err)
	}
	s := VMIStatus{Name: v.Metadata.Name, UID: string(v.Metadata.UID), Phase: v.Status.Phase, Node: v.Status.NodeName}
	if len(v.Status.Interfaces) > 0 {
		s.IP, s.IPs = v.Status.Interfaces[0].IPAddress, v.Status.Interfaces[0].IPAddresses
	}
	for _, c := range v.Status.Conditions {
		s.Conditions = append(s.Conditions, VMICondition(c))
	}
	return s, nil
}

// VMIStore reaches VirtualMachineInstances (the API's through the clientset's REST client; a
// test's in memory).
type VMIStore interface {
	Create(ctx context.Context, namespace string, body []byte, dryRun bool) error
	Get(ctx context.Context, namespace, name string) ([]byte, error)
	// List returns the metadata of the VMIs selector selects in namespace ("": every
	// namespace); none when the API has no such resource (KubeVirt is not installed).
	List(ctx context.Context, namespace, selector string) ([]metav1.ObjectMeta, error)
	Delete(ctx context.Context, namespace, name string) error
}

// RESTVMIs goes through the clientset's REST client (KubeVirt's group is not in the clientset).
type RESTVMIs struct{ CS kubernetes.Interface }

func (r RESTVMIs) store() restStore { return restStore{r.CS, "VirtualMachineInstances"} }

// reachable says whether the clientset has a REST client (a fake one has none).
func (r RESTVMIs) reachable() bool { _, err := r.store().client(vmiPath("")); return err == nil }

func vmiPath(namespace string, name ...string) string {
	return path.Join(append([]string{"/apis", KubeVirtGroup, KubeVirtVersion, "namespaces", namespace, VMIResource}, name...)...)
}

// Create creates the VMI body (JSON) in namespace; dryRun asks for a server-side dry run with
// strict field validation (nothing is created; unknown fields are refused).
func (r RESTVMIs) Create(ctx context.Context, namespace string, body []byte, dryRun bool) error {
	var params []string
	if dryRun {
		params = []string{"dryRun", "All", "fieldValidation", "Strict"}
	}
	_, err := r.store().create(ctx, vmiPath(namespace), body, params...)
	return err
}

// Get reads a VMI (the API's JSON).
func (r RESTVMIs) Get(ctx context.Context, namespace, name string) ([]byte, error) {
	return r.store().get(ctx, vmiPath(namespace, name))
}

// List lists the VMIs selector selects in namespace ("": all namespaces).
func (r RESTVMIs) List(ctx context.Context, namespace, selector string) ([]metav1.ObjectMeta, error) {
	p := path.Join("/apis", KubeVirtGroup, KubeVirtVersion, VMIResource)
	if namespace != "" {
		p = vmiPath(namespace)
	}
	return listed(r.store().list(ctx, p, selector)) // none without KubeVirt
}

// noVMIsFor says that a VMI list's error means there are none of cnperf's to remove: the
// API has no VMIs (no KubeVirt), or the caller may not list them, so it cannot have created any
// with cnperf (a run with --vm asks for list in its preflight). A run without VMs, e.g. with
// deploy/rbac/run.yaml only, must not fail its clean-up on a cluster that has KubeVirt.
func noVMIsFor(err error) bool {
	return err != nil && (apierrors.IsForbidden(err) || apierrors.IsNotFound(err))
}

// Delete deletes a VMI.
func (r RESTVMIs) Delete(ctx context.Context, namespace, name string) error {
	return r.store().delete(ctx, vmiPath(namespace, name))
}

// VMAccess is what a run with VM endpoints needs in ns beyond RunAccess: its VMIs, and the
// launcher pods' logs (the guest's console when it does not boot).
func VMAccess(ns string) []Access {
	return Verbs(ns, KubeVirtGroup, VMIResource, "", "get", "list", "create", "delete")
}

// VMSupport is what CheckKubeVirt learns of the cluster's KubeVirt.
type VMSupport struct {
	Missing  string // what the cluster lacks for VM endpoints ("" when nothing)
	Version  string // the KubeVirt resource's status.observedKubeVirtVersion ("" when not readable)
	Emulated bool   // developerConfiguration.useEmulation: guests in QEMU's software emulation
	// Read says a KubeVirt resource was read (listing them may be forbidden): FeatureGates and
	// Emulated are known only then.
	Read         bool
	FeatureGates []string // developerConfiguration.featureGates, e.g. Passt
	// Namespace and Name are the (first) KubeVirt resource's.
	Namespace, Name string
}

// FeatureGatePasst is the KubeVirt feature gate the passt binding needs (KubeVirt v1.0).
const FeatureGatePasst = "Passt"

// CheckKubeVirt says what the cluster lacks for VM endpoints: the API server must serve
// kubevirt.io/v1 virtualmachineinstances. Its version, whether it runs guests in software
// emulation and its feature gates are read from the KubeVirt resource when it can be.
func CheckKubeVirt(ctx context.Context, cs kubernetes.Interface) VMSupport {
	res, err := cs.Discovery().ServerResourcesForGroupVersion(KubeVirtGroup + "/" + KubeVirtVersion)
	if err != nil || res == nil {
		why := "the API server does not serve " + KubeVirtGroup + "/" + KubeVirtVersion
		if err != nil && !apierrors.IsNotFound(err) {
			why += " (" + firstLine(err) + ")"
		}
		return VMSupport{Missing: "KubeVirt is not installed: the CRD " + VMICRD + " is missing (" + why + ")"}
	}
	found := false
	for _, r := range res.APIResources {
		found = found || r.Name == VMIResource
	}
	if !found {
		return VMSupport{Missing: "KubeVirt is not installed: " + KubeVirtGroup + "/" + KubeVirtVersion + " has no " + VMIResource}
	}
	rc := cs.CoreV1().RESTClient()
	if rc == nil || reflect.ValueOf(rc).IsNil() {
		return VMSupport{}
	}
	raw, err := rc.Get().AbsPath("/apis", KubeVirtGroup, KubeVirtVersion, "kubevirts").DoRaw(ctx)
	if err != nil {
		return VMSupport{} // not readable (RBAC): not known
	}
	return kubeVirts(raw)
}

// kubeVirts is what a list of KubeVirt resources (the API's JSON) says; nothing is known when
// it is not one.
func kubeVirts(raw []byte) VMSupport {
	var l struct {
		Kind  string `json:"kind"`
		Items []struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
			Spec     struct {
				Configuration struct {
					DeveloperConfiguration struct {
						UseEmulation bool     `json:"useEmulation"`
						FeatureGates []string `json:"featureGates"`
					} `json:"developerConfiguration"`
				} `json:"configuration"`
			} `json:"spec"`
			Status struct {
				Version string `json:"observedKubeVirtVersion"`
			} `json:"status"`
		} `json:"items"`
	}
	var s VMSupport
	if json.Unmarshal(raw, &l) != nil || l.Kind != "KubeVirtList" {
		return s
	}
	s.Read = len(l.Items) > 0
	for _, it := range l.Items {
		dc := it.Spec.Configuration.DeveloperConfiguration
		s.Emulated = s.Emulated || dc.UseEmulation
		s.Version = cmp.Or(s.Version, it.Status.Version)
		s.FeatureGates = append(s.FeatureGates, dc.FeatureGates...)
		if s.Name == "" {
			s.Namespace, s.Name = it.Metadata.Namespace, it.Metadata.Name
		}
	}
	return s
}
