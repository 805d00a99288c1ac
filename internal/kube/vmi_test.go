package kube

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cnperf/cnperf/internal/golden"
)

// crdSchema is the part of an OpenAPI v3 schema a CRD's structural schema uses.
type crdSchema struct {
	Type                 string                `json:"type"`
	Properties           map[string]*crdSchema `json:"properties"`
	Items                *crdSchema            `json:"items"`
	AdditionalProperties *crdSchema            `json:"additionalProperties"`
	Required             []string              `json:"required"`
	Enum                 []any                 `json:"enum"`
	IntOrString          bool                  `json:"x-kubernetes-int-or-string"`
	PreserveUnknown      bool                  `json:"x-kubernetes-preserve-unknown-fields"`
}

// vmiSchema is KubeVirt v1.0.1's schema of VirtualMachineInstance (testdata says where from).
func vmiSchema(t *testing.T) *crdSchema {
	t.Helper()
	raw, err := os.ReadFile("testdata/kubevirt-v1.0.1-vmi-schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Schema *crdSchema `json:"openAPIV3Schema"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	return f.Schema
}

// validate checks v against s as the API server's strict field validation does: every field
// known to the crdSchema, of its type, required fields present. It returns the problems.
func validate(s *crdSchema, v any, at string) []string {
	if s == nil {
		return nil
	}
	var out []string
	switch x := v.(type) {
	case map[string]any:
		if s.Type != "object" && !s.PreserveUnknown {
			return []string{fmt.Sprintf("%s: an object, want %s", at, s.Type)}
		}
		for _, r := range s.Required {
			if _, ok := x[r]; !ok {
				out = append(out, fmt.Sprintf("%s.%s: required", at, r))
			}
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			switch {
			case at == "" && k == "metadata": // ObjectMeta: the API server's own, not in a CRD's schema
			case s.Properties[k] != nil:
				out = append(out, validate(s.Properties[k], x[k], at+"."+k)...)
			case s.AdditionalProperties != nil:
				out = append(out, validate(s.AdditionalProperties, x[k], at+"."+k)...)
			case !s.PreserveUnknown:
				out = append(out, fmt.Sprintf("%s.%s: unknown field", at, k))
			}
		}
	case []any:
		if s.Type != "array" {
			return []string{fmt.Sprintf("%s: an array, want %s", at, s.Type)}
		}
		for i, e := range x {
			out = append(out, validate(s.Items, e, fmt.Sprintf("%s[%d]", at, i))...)
		}
	case string:
		if s.Type != "string" && !s.IntOrString {
			out = append(out, fmt.Sprintf("%s: a string, want %s", at, s.Type))
		}
		if len(s.Enum) > 0 && !slices.Contains(s.Enum, any(x)) {
			out = append(out, fmt.Sprintf("%s: %q not in %v", at, x, s.Enum))
		}
	case float64:
		if s.Type != "integer" && s.Type != "number" && !s.IntOrString {
			out = append(out, fmt.Sprintf("%s: a number, want %s", at, s.Type))
		}
	case bool:
		if s.Type != "boolean" {
			out = append(out, fmt.Sprintf("%s: a boolean, want %s", at, s.Type))
		}
	}
	return out
}

func testVM() VMOptions {
	return VMOptions{Name: "cnperf-srv-native-pod-1a2b3c4d", Namespace: "cnperf", Labels: map[string]string{"cnperf.dev/run": "r1"},
		Nodes: []string{"node1"}, Tolerations: []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}},
		Image: "localhost/cnperf-kubevirt/cnperf-guest:v1.0.1", PullPolicy: corev1.PullIfNotPresent, Binding: BindingMasquerade,
		Sockets: 1, Cores: 2, Threads: 1, Memory: resource.MustParse("512Mi"), TokenSecret: "cnperf-token-1a2b3c4d", DataPort: 7101,
		Ports: []VMPort{{Port: 7100, Protocol: "TCP"}, {Port: 7101, Protocol: "TCP"}, {Port: 7101, Protocol: "UDP"}, {Port: 7102, Protocol: "TCP"}}}
}

// TestVMIAgainstKubeVirtSchema: every VMI cnperf builds (each binding, a topology, node pinning,
// tolerations) is valid against KubeVirt's own CRD schema; a wrong field is refused by the same
// check (the check can fail).
func TestVMIAgainstKubeVirtSchema(t *testing.T) {
	s := vmiSchema(t)
	for _, b := range Bindings {
		o := testVM()
		o.Binding = b
		obj := toMap(o.VMI())
		if errs := validate(s, obj, ""); len(errs) > 0 {
			t.Errorf("%s: %s", b, strings.Join(errs, "; "))
		}
	}
	sec := testVM()
	sec.Secondary = &VMSecondary{Network: "ns/net", MAC: SecondaryMAC(sec.Name), Address: "10.10.10.12/24"}
	if errs := validate(s, toMap(sec.VMI()), ""); len(errs) > 0 {
		t.Errorf("secondary network: %s", strings.Join(errs, "; "))
	}
	bad := toMap(testVM().VMI()).(map[string]any)
	bad["spec"].(map[string]any)["domain"].(map[string]any)["cpu"].(map[string]any)["vcpus"] = 2.0
	bad["spec"].(map[string]any)["domain"].(map[string]any)["firmware"].(map[string]any)["kernelBoot"].(map[string]any)["kernelArgs"] = 3.0
	got := strings.Join(validate(s, bad, ""), "; ")
	for _, want := range []string{".spec.domain.cpu.vcpus: unknown field", ".spec.domain.firmware.kernelBoot.kernelArgs: a number, want string"} {
		if !strings.Contains(got, want) {
			t.Errorf("a wrong VMI: %q, want %q", got, want)
		}
	}
}

// TestVMIGolden: the object a cluster gets (testdata/objects/vmi-*.json, written by VMI).
func TestVMIGolden(t *testing.T) {
	for _, b := range Bindings {
		o := testVM()
		o.Binding = b
		got, err := json.MarshalIndent(o.VMI(), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		golden.Check(t, "testdata/objects/vmi-"+b+".json", append(got, '\n'))
	}
	// on a secondary network: its address static (a definition without IPAM), or its IPAM's by DHCP
	for _, tt := range []struct {
		file    string
		address string
	}{{"vmi-masquerade-secondary-static.json", "10.10.10.12/24"}, {"vmi-masquerade-secondary-dhcp.json", ""}} {
		o := testVM()
		o.Secondary = &VMSecondary{Network: "cnperf/br-netperf", MAC: SecondaryMAC(o.Name), Address: tt.address}
		got, err := json.MarshalIndent(o.VMI(), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		golden.Check(t, "testdata/objects/"+tt.file, append(got, '\n'))
	}
	if n := testVM().VCPUs(); n != 2 {
		t.Errorf("VCPUs = %d, want 2", n)
	}
}

// TestNoVMIsFor: a clean-up on a cluster with KubeVirt does not fail when the run may not list
// VMIs (it created none: --vm's preflight asks for list); other errors still count.
func TestNoVMIsFor(t *testing.T) {
	gr := schema.GroupResource{Group: KubeVirtGroup, Resource: VMIResource}
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{apierrors.NewForbidden(gr, "", errors.New("no RBAC")), true},
		{apierrors.NewGenericServerResponse(403, "GET", gr, "", "", 0, true), true},
		{apierrors.NewNotFound(gr, ""), true},
		{apierrors.NewServiceUnavailable("down"), false},
		{errors.New("connection refused"), false},
		{nil, false},
	} {
		if got := noVMIsFor(tt.err); got != tt.want {
			t.Errorf("noVMIsFor(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

// TestSecondaryMAC: a locally administered unicast MAC, the same for a name, another for another.
func TestSecondaryMAC(t *testing.T) {
	a, b := SecondaryMAC("cnperf-srv-native-attachment-1a2b3c4d"), SecondaryMAC("cnperf-cli-attachment-c-1a2b3c4d")
	if len(a) != 17 || !strings.HasPrefix(a, "02:") || a == b || a != SecondaryMAC("cnperf-srv-native-attachment-1a2b3c4d") {
		t.Errorf("SecondaryMAC: %s, %s", a, b)
	}
}

// TestIPAMOf: the IPAM plugin of a definition's configuration, one plugin or a list's first.
func TestIPAMOf(t *testing.T) {
	for _, tt := range []struct{ config, want, err string }{
		{`{"cniVersion": "0.3.1", "type": "bridge", "name": "br-netperf", "bridge": "br0"}`, "", ""},
		{`{"type": "bridge", "bridge": "mbr0", "ipam": {"type": "whereabouts", "range": "10.125.0.0/24"}}`, "whereabouts", ""},
		{`{"cniVersion": "0.4.0", "plugins": [{"type": "bridge", "ipam": {"type": "static"}}, {"type": "tuning"}]}`, "static", ""},
		{`{"plugins": [{"type": "bridge"}, {"type": "tuning", "ipam": {"type": "host-local"}}]}`, "", ""},
		{`not json`, "", "spec.config is not a CNI configuration (JSON)"},
	} {
		got, err := IPAMOf(tt.config)
		if got != tt.want || (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("%s: %q, %v; want %q, %q", tt.config, got, err, tt.want, tt.err)
		}
	}
}

// TestBridgeDefinition: k8s-netperf's --vm --bridge BRIDGE definition (DeployNADBridge)'s
// configuration, byte for byte; a bridge name the kernel would not take is refused.
func TestBridgeDefinition(t *testing.T) {
	d, err := BridgeDefinition("br0")
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"cniVersion": "0.3.1", "type": "bridge", "name": "br-netperf", "bridge": "br0"}`
	if d.Name != "br-netperf" || d.Config != want {
		t.Errorf("BridgeDefinition(br0) = %+v, want br-netperf with %s", d, want)
	}
	if ipam, _ := IPAMOf(d.Config); ipam != "" {
		t.Errorf("IPAM %q, want none", ipam)
	}
	if _, err := BridgeDefinition("a/b"); err == nil {
		t.Error(`BridgeDefinition("a/b"): no error`)
	}
}
