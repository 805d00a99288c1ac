package plan

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// CheckNetwork checks a secondary network's name (a plan's `network`, `--network`):
// NAMESPACE/NAME of a Multus NetworkAttachmentDefinition, both DNS-1123 names (a NAD's name is
// a subdomain, its namespace a label).
func CheckNetwork(n string) error {
	ns, name, ok := strings.Cut(n, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return fmt.Errorf("network %q: expected NAMESPACE/NAME of a NetworkAttachmentDefinition, e.g. default/br-netperf", n)
	}
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return fmt.Errorf("network %q: namespace %q is not a DNS label (a-z, 0-9 and '-', at most 63)", n, ns)
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return fmt.Errorf("network %q: name %q is not a DNS subdomain (a-z, 0-9, '-' and '.')", n, name)
	}
	return nil
}
