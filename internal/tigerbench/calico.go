package tigerbench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/clusterinfo"
)

// The Calico objects cnperf reads and changes.
var (
	GVRInstallation       = schema.GroupVersionResource{Group: "operator.tigera.io", Version: "v1", Resource: "installations"}
	GVRTigerStatus        = schema.GroupVersionResource{Group: "operator.tigera.io", Version: "v1", Resource: "tigerstatuses"}
	GVRIPPool             = schema.GroupVersionResource{Group: "crd.projectcalico.org", Version: "v1", Resource: "ippools"}
	GVRFelixConfiguration = schema.GroupVersionResource{Group: "crd.projectcalico.org", Version: "v1", Resource: "felixconfigurations"}
	GVRClusterInformation = schema.GroupVersionResource{Group: "crd.projectcalico.org", Version: "v1", Resource: "clusterinformations"}
)

// CalicoSettings are the settings a tiger-bench test may ask for; "" leaves one as the run
// found it.
type CalicoSettings struct {
	Encap     string // none, vxlan, ipip
	Dataplane string // iptables, nftables, bpf
	// CPULimit is calico-node's CPU limit ("0" removes it).
	CPULimit string
}

// IsZero reports whether nothing is asked.
func (s CalicoSettings) IsZero() bool { return s == CalicoSettings{} }

// String lists the settings asked, e.g. "encap vxlan, dataplane bpf".
func (s CalicoSettings) String() string {
	var parts []string
	if s.Encap != "" {
		parts = append(parts, "encap "+s.Encap)
	}
	if s.Dataplane != "" {
		parts = append(parts, "dataplane "+s.Dataplane)
	}
	if s.CPULimit != "" {
		parts = append(parts, "calicoNodeCPULimit "+s.CPULimit)
	}
	return strings.Join(parts, ", ")
}

// Validate checks the values.
func (s CalicoSettings) Validate() error {
	var errs []error
	if s.Encap != "" && !slices.Contains([]string{"none", "vxlan", "ipip"}, s.Encap) {
		errs = append(errs, fmt.Errorf("encap %q: want none, vxlan or ipip", s.Encap))
	}
	if s.Dataplane != "" && !slices.Contains([]string{"iptables", "nftables", "bpf"}, s.Dataplane) {
		errs = append(errs, fmt.Errorf("dataplane %q: want iptables, nftables or bpf", s.Dataplane))
	}
	if s.CPULimit != "" {
		if _, err := resource.ParseQuantity(s.CPULimit); err != nil {
			errs = append(errs, fmt.Errorf("calicoNodeCPULimit %q: %w", s.CPULimit, err))
		}
	}
	return errors.Join(errs...)
}

// Calico reads and reconfigures Calico through its operator's Installation, its IPPools and
// FelixConfiguration. Every change is undone by Restore, which puts back exactly the fields
// found before the first change (absent fields are removed again).
type Calico struct {
	Dynamic dynamic.Interface
	Client  kubernetes.Interface
	Log     io.Writer
	// SettleTimeout bounds the wait for calico-node to roll out after a change (default 10m).
	SettleTimeout time.Duration
	// SettleGrace is how long a change is given before anything is judged or measured
	// (default DefaultSettleGrace).
	SettleGrace time.Duration

	orig *calicoSnapshot
}

// calicoSnapshot is what Restore puts back.
type calicoSnapshot struct {
	installation bool
	// Installation fields (nil = absent).
	linuxDataplane any
	ipPools        any
	nodeDaemonSet  any
	// IPPool modes by pool name.
	pools     map[string]poolModes
	poolOrder []string
	// FelixConfiguration default, when there is no Installation.
	felix        bool
	bpfEnabled   any
	nftablesMode any
	// Settings as found, for reports.
	settings CalicoSettings
}

type poolModes struct {
	cidr            string
	ipipMode, vxlan any
}

func (c *Calico) logf(format string, a ...any) {
	if c.Log != nil {
		fmt.Fprintf(c.Log, "calico: "+format+"\n", a...)
	}
}

// get reads a cluster-scoped object; found is false when it (or its CRD) does not exist.
func (c *Calico) get(ctx context.Context, gvr schema.GroupVersionResource, name string) (*unstructured.Unstructured, bool, error) {
	o, err := c.Dynamic.Resource(gvr).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("get %s %s: %w", gvr.Resource, name, err)
	}
	return o, true, nil
}

func (c *Calico) listPools(ctx context.Context) ([]unstructured.Unstructured, error) {
	l, err := c.Dynamic.Resource(GVRIPPool).List(ctx, metav1.ListOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list ippools: %w", err)
	}
	items := l.Items
	slices.SortFunc(items, func(a, b unstructured.Unstructured) int { return strings.Compare(a.GetName(), b.GetName()) })
	return items, nil
}

// Present reports whether Calico's resources exist (an operator Installation or IP pools).
func (c *Calico) Present(ctx context.Context) (bool, error) {
	_, inst, err := c.get(ctx, GVRInstallation, "default")
	if err != nil {
		return false, err
	}
	if inst {
		return true, nil
	}
	pools, err := c.listPools(ctx)
	return len(pools) > 0, err
}

func field(o *unstructured.Unstructured, path ...string) any {
	if o == nil {
		return nil
	}
	v, ok, _ := unstructured.NestedFieldCopy(o.Object, path...)
	if !ok {
		return nil
	}
	return v
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// Describe reads Calico's product, version, encapsulation, dataplane, WireGuard, IP family,
// cluster type and CNI type. It returns nil when Calico is not present.
func (c *Calico) Describe(ctx context.Context) (*api.CalicoDetails, error) {
	inst, hasInst, err := c.get(ctx, GVRInstallation, "default")
	if err != nil {
		return nil, err
	}
	pools, err := c.listPools(ctx)
	if err != nil {
		return nil, err
	}
	if !hasInst && len(pools) == 0 {
		return nil, nil
	}
	felix, _, _ := c.get(ctx, GVRFelixConfiguration, "default")
	ci, _, _ := c.get(ctx, GVRClusterInformation, "default")
	d := &api.CalicoDetails{Product: "calico"}
	switch str(field(inst, "status", "variant")) {
	case "TigeraSecureEnterprise":
		d.Product = "calient"
	case "":
		if str(field(ci, "spec", "cnxVersion")) != "" {
			d.Product = "calient"
		}
	}
	d.Version = str(field(inst, "status", "calicoVersion"))
	if d.Version == "" {
		d.Version = str(field(ci, "spec", "calicoVersion"))
	}
	d.ClusterType = str(field(ci, "spec", "clusterType"))
	d.CNIType = str(field(inst, "spec", "cni", "type"))
	if ipp, ok := field(inst, "spec", "calicoNetwork", "ipPools").([]any); ok && len(ipp) > 0 {
		if m, ok := ipp[0].(map[string]any); ok {
			d.Encapsulation = str(m["encapsulation"])
		}
	}
	if d.Encapsulation == "" && len(pools) > 0 {
		d.Encapsulation = poolEncapsulation(&pools[0])
	}
	dp := str(field(inst, "status", "computed", "calicoNetwork", "linuxDataplane"))
	if dp == "" {
		dp = str(field(inst, "spec", "calicoNetwork", "linuxDataplane"))
	}
	if dp != "" {
		d.Dataplane = strings.ToLower(dp)
	} else if felix != nil {
		d.Dataplane = felixDataplane(felix)
	}
	if spec, ok := field(felix, "spec").(map[string]any); ok {
		var wg clusterinfo.FelixWireGuard
		if runtime.DefaultUnstructuredConverter.FromUnstructured(spec, &wg) == nil {
			wg.Set(d)
		}
	}
	var v4, v6 bool
	for i := range pools {
		if ip, _, err := net.ParseCIDR(str(field(&pools[i], "spec", "cidr"))); err == nil {
			if ip.To4() != nil {
				v4 = true
			} else {
				v6 = true
			}
		}
	}
	if f := clusterinfo.IPFamily(v4, v6); f != "" {
		d.IPFamily = f
	}
	return d, nil
}

// poolEncapsulation names a pool's encapsulation as the Installation does (VXLAN,
// VXLANCrossSubnet, IPIP, IPIPCrossSubnet, None).
func poolEncapsulation(p *unstructured.Unstructured) string {
	return clusterinfo.PoolEncapsulation(str(field(p, "spec", "vxlanMode")), str(field(p, "spec", "ipipMode")))
}

func felixDataplane(f *unstructured.Unstructured) string {
	if b, ok := field(f, "spec", "bpfEnabled").(bool); ok && b {
		return "bpf"
	}
	if m := str(field(f, "spec", "nftablesMode")); m == "Enabled" {
		return "nftables"
	}
	return "iptables"
}

// snapshot records the fields Apply may change, once.
func (c *Calico) snapshot(ctx context.Context) error {
	if c.orig != nil {
		return nil
	}
	s := &calicoSnapshot{pools: map[string]poolModes{}}
	inst, hasInst, err := c.get(ctx, GVRInstallation, "default")
	if err != nil {
		return err
	}
	if hasInst {
		s.installation = true
		s.linuxDataplane = field(inst, "spec", "calicoNetwork", "linuxDataplane")
		s.ipPools = field(inst, "spec", "calicoNetwork", "ipPools")
		s.nodeDaemonSet = field(inst, "spec", "calicoNodeDaemonSet")
		dp := str(field(inst, "status", "computed", "calicoNetwork", "linuxDataplane"))
		if dp == "" {
			dp = str(s.linuxDataplane)
		}
		s.settings.Dataplane = strings.ToLower(dp)
		s.settings.CPULimit = cpuLimitOf(s.nodeDaemonSet)
	}
	pools, err := c.listPools(ctx)
	if err != nil {
		return err
	}
	for i := range pools {
		p := &pools[i]
		s.pools[p.GetName()] = poolModes{cidr: str(field(p, "spec", "cidr")), ipipMode: field(p, "spec", "ipipMode"), vxlan: field(p, "spec", "vxlanMode")}
		s.poolOrder = append(s.poolOrder, p.GetName())
		if i == 0 {
			s.settings.Encap = poolEncapsulation(p)
		}
	}
	if !hasInst {
		felix, ok, err := c.get(ctx, GVRFelixConfiguration, "default")
		if err != nil {
			return err
		}
		if ok {
			s.felix = true
			s.bpfEnabled = field(felix, "spec", "bpfEnabled")
			s.nftablesMode = field(felix, "spec", "nftablesMode")
			s.settings.Dataplane = felixDataplane(felix)
		}
	}
	if !hasInst && len(pools) == 0 {
		return errors.New("Calico is not installed here: no operator Installation \"default\" (operator.tigera.io/v1) and no IPPool (crd.projectcalico.org/v1)")
	}
	c.orig = s
	c.logf("settings before the run: %s (restored at the end)", s.describe())
	return nil
}

func (s *calicoSnapshot) describe() string {
	var parts []string
	for _, n := range s.poolOrder {
		p := s.pools[n]
		parts = append(parts, fmt.Sprintf("IPPool %s ipipMode=%v vxlanMode=%v", n, orAbsent(p.ipipMode), orAbsent(p.vxlan)))
	}
	if s.installation {
		parts = append(parts, fmt.Sprintf("Installation default linuxDataplane=%v calico-node CPU limit=%s", orAbsent(s.linuxDataplane), orNone(s.settings.CPULimit)))
	}
	if s.felix {
		parts = append(parts, fmt.Sprintf("FelixConfiguration default bpfEnabled=%v nftablesMode=%v", orAbsent(s.bpfEnabled), orAbsent(s.nftablesMode)))
	}
	return strings.Join(parts, "; ")
}

func orAbsent(v any) any {
	if v == nil {
		return "(unset)"
	}
	return v
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// cpuLimitOf reads calico-node's CPU limit from an Installation's calicoNodeDaemonSet.
func cpuLimitOf(ds any) string {
	m, ok := ds.(map[string]any)
	if !ok {
		return ""
	}
	cs, _, _ := unstructured.NestedSlice(m, "spec", "template", "spec", "containers")
	for _, c := range cs {
		cm, ok := c.(map[string]any)
		if !ok || cm["name"] != "calico-node" {
			continue
		}
		v, _, _ := unstructured.NestedString(cm, "resources", "limits", "cpu")
		return v
	}
	return ""
}

// Apply brings Calico to want: the fields a test sets are changed, the ones it leaves empty go
// back to what the run found. The first call records the settings found. The report lists the
// changes made (none when Calico already had the settings).
func (c *Calico) Apply(ctx context.Context, want CalicoSettings) (*api.CalicoChange, error) {
	ch := &api.CalicoChange{Encap: want.Encap, Dataplane: want.Dataplane, CalicoNodeCPULimit: want.CPULimit}
	fail := func(err error) (*api.CalicoChange, error) {
		ch.Error = err.Error()
		return ch, err
	}
	if err := want.Validate(); err != nil {
		return fail(err)
	}
	if err := c.snapshot(ctx); err != nil {
		return fail(err)
	}
	o := c.orig
	ch.PreviousEncap, ch.PreviousDataplane, ch.PreviousCalicoNodeCPULimit = o.settings.Encap, o.settings.Dataplane, o.settings.CPULimit
	changes, restart, err := c.write(ctx, want)
	ch.Changes = changes
	if err != nil {
		return fail(err)
	}
	if len(changes) == 0 {
		return ch, nil
	}
	for _, l := range changes {
		c.logf("%s", l)
	}
	if err := c.settle(ctx, restart); err != nil {
		return fail(err)
	}
	return ch, nil
}

// Restore puts back the settings found before the first Apply. It is safe to call when Apply
// was never called, and meant to get a fresh context (the run's may be cancelled).
func (c *Calico) Restore(ctx context.Context) error {
	if c.orig == nil {
		return nil
	}
	changes, restart, err := c.write(ctx, CalicoSettings{})
	for _, l := range changes {
		c.logf("restore: %s", l)
	}
	if err != nil {
		return fmt.Errorf("restore Calico settings (%s): %w", c.orig.describe(), err)
	}
	if len(changes) > 0 {
		if err := c.settle(ctx, restart); err != nil {
			return fmt.Errorf("restore Calico settings: %w", err)
		}
		c.logf("restored: %s", c.orig.describe())
	}
	return nil
}

// write makes the objects match want (empty fields: the original values) and returns what
// changed, and whether calico-node pods must be restarted.
func (c *Calico) write(ctx context.Context, want CalicoSettings) (changes []string, restart bool, err error) {
	o := c.orig
	// IP pools.
	for _, name := range o.poolOrder {
		orig := o.pools[name]
		ipip, vx := orig.ipipMode, orig.vxlan
		if want.Encap != "" && isIPv4CIDR(orig.cidr) {
			ipip, vx = encapModes(want.Encap)
		}
		line, err := c.update(ctx, GVRIPPool, name, func(u *unstructured.Unstructured) []string {
			var d []string
			d = append(d, setField(u, ipip, "IPPool "+name+": ipipMode", "spec", "ipipMode")...)
			d = append(d, setField(u, vx, "IPPool "+name+": vxlanMode", "spec", "vxlanMode")...)
			return d
		})
		changes = append(changes, line...)
		if err != nil {
			return changes, restart, err
		}
	}
	switch {
	case o.installation:
		line, restart, err := c.writeInstallation(ctx, want)
		return append(changes, line...), restart, err
	case want.CPULimit != "":
		return changes, restart, errors.New("calicoNodeCPULimit needs the Calico operator (Installation \"default\"), which this cluster does not have")
	case o.felix:
		line, err := c.writeFelix(ctx, want)
		return append(changes, line...), restart, err
	case want.Dataplane != "":
		return changes, restart, errors.New("dataplane: neither an operator Installation nor a FelixConfiguration \"default\" to change")
	}
	return changes, restart, nil
}

// writeInstallation writes the dataplane, the pools' encapsulation and calico-node's CPU limit
// to the operator's Installation; restart says calico-node's DaemonSet changed.
func (c *Calico) writeInstallation(ctx context.Context, want CalicoSettings) (changes []string, restart bool, err error) {
	o := c.orig
	dp := o.linuxDataplane
	if want.Dataplane != "" {
		dp = map[string]string{"iptables": "Iptables", "nftables": "Nftables", "bpf": "BPF"}[want.Dataplane]
		if want.Dataplane == "bpf" && str(o.linuxDataplane) != "BPF" {
			if err := c.checkBPFPrerequisite(ctx); err != nil {
				return nil, false, err
			}
		}
	}
	pools := o.ipPools
	if want.Encap != "" {
		pools = withEncapsulation(o.ipPools, want.Encap)
	}
	ds := o.nodeDaemonSet
	if want.CPULimit != "" {
		ds = withCPULimit(o.nodeDaemonSet, want.CPULimit)
	}
	changes, err = c.update(ctx, GVRInstallation, "default", func(u *unstructured.Unstructured) []string {
		var d []string
		d = append(d, setField(u, dp, "Installation default: linuxDataplane", "spec", "calicoNetwork", "linuxDataplane")...)
		d = append(d, setField(u, pools, "Installation default: ipPools", "spec", "calicoNetwork", "ipPools")...)
		cd := setField(u, ds, "Installation default: calicoNodeDaemonSet", "spec", "calicoNodeDaemonSet")
		if len(cd) > 0 {
			restart = true
		}
		return append(d, cd...)
	})
	return changes, restart, err
}

// writeFelix writes the dataplane to FelixConfiguration "default" (no operator), and checks
// that an nftables dataplane stuck.
func (c *Calico) writeFelix(ctx context.Context, want CalicoSettings) ([]string, error) {
	o := c.orig
	bpf, nft := o.bpfEnabled, o.nftablesMode
	switch want.Dataplane {
	case "bpf":
		bpf = true
	case "iptables":
		bpf, nft = false, "Disabled"
	case "nftables":
		bpf, nft = false, "Enabled"
	}
	changes, err := c.update(ctx, GVRFelixConfiguration, "default", func(u *unstructured.Unstructured) []string {
		d := setField(u, bpf, "FelixConfiguration default: bpfEnabled", "spec", "bpfEnabled")
		return append(d, setField(u, nft, "FelixConfiguration default: nftablesMode", "spec", "nftablesMode")...)
	})
	if err != nil || want.Dataplane != "nftables" {
		return changes, err
	}
	f, _, err := c.get(ctx, GVRFelixConfiguration, "default")
	if err != nil {
		return changes, err
	}
	if str(field(f, "spec", "nftablesMode")) != "Enabled" {
		return changes, errors.New("dataplane nftables: FelixConfiguration default does not keep spec.nftablesMode: this Calico's CRD has no such field, so it has no nftables dataplane")
	}
	return changes, nil
}

// update reads an object, lets mutate change it (returning what it changed), and writes it
// when something changed, retrying on conflicts.
func (c *Calico) update(ctx context.Context, gvr schema.GroupVersionResource, name string, mutate func(*unstructured.Unstructured) []string) ([]string, error) {
	var changes []string
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		u, err := c.Dynamic.Resource(gvr).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		changes = mutate(u)
		if len(changes) == 0 {
			return nil
		}
		out, err := c.Dynamic.Resource(gvr).Update(ctx, u, metav1.UpdateOptions{FieldManager: FieldManager})
		if err != nil {
			return err
		}
		changes = c.keptChanges(gvr, name, changes, u, out)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("update %s %s: %w", gvr.Resource, name, err)
	}
	return changes, nil
}

// keptChanges drops the change lines of spec fields that the API server did not keep: a CRD
// without the field prunes it (Calico v3.28's FelixConfiguration has no nftablesMode), so the
// write changed nothing there. Each one is said on the log; the caller sees it missing.
func (c *Calico) keptChanges(gvr schema.GroupVersionResource, name string, changes []string, sent, stored *unstructured.Unstructured) []string {
	sentSpec, _, _ := unstructured.NestedMap(sent.Object, "spec")
	storedSpec, _, _ := unstructured.NestedMap(stored.Object, "spec")
	var dropped []string
	for k := range sentSpec {
		if _, ok := storedSpec[k]; !ok {
			dropped = append(dropped, k)
		}
	}
	if len(dropped) == 0 {
		return changes
	}
	sort.Strings(dropped)
	var kept []string
	for _, line := range changes {
		keep := true
		for _, k := range dropped {
			if strings.Contains(line, ": "+k+" ") {
				keep = false
			}
		}
		if keep {
			kept = append(kept, line)
		}
	}
	c.logf("%s %s: the API server did not keep spec.%s (its CRD has no such field): not changed", gvr.Resource, name, strings.Join(dropped, ", spec."))
	return kept
}

// setField sets (or, for nil, removes) a field and describes the change; nothing when equal.
func setField(u *unstructured.Unstructured, v any, label string, path ...string) []string {
	cur, found, _ := unstructured.NestedFieldCopy(u.Object, path...)
	if !found {
		cur = nil
	}
	if reflect.DeepEqual(normal(cur), normal(v)) {
		return nil
	}
	if v == nil {
		unstructured.RemoveNestedField(u.Object, path...)
	} else {
		_ = unstructured.SetNestedField(u.Object, deepCopyJSON(v), path...)
	}
	return []string{fmt.Sprintf("%s %s -> %s", label, short(cur), short(v))}
}

// normal makes values comparable whatever their Go types (decoded JSON vs literals).
func normal(v any) any {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

func deepCopyJSON(v any) any { return runtimeDeepCopy(normal(v)) }

func runtimeDeepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[k] = runtimeDeepCopy(x)
		}
		return m
	case []any:
		s := make([]any, len(t))
		for i, x := range t {
			s[i] = runtimeDeepCopy(x)
		}
		return s
	case float64:
		// JSON numbers: keep integers as int64, which unstructured accepts.
		if t == float64(int64(t)) {
			return int64(t)
		}
		return t
	}
	return v
}

func short(v any) string {
	if v == nil {
		return "(unset)"
	}
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	if len(b) > 120 {
		return string(b[:117]) + "..."
	}
	return string(b)
}

func isIPv4CIDR(cidr string) bool {
	ip, _, err := net.ParseCIDR(cidr)
	return err == nil && ip.To4() != nil
}

// encapModes are an IPPool's ipipMode and vxlanMode for an encap setting.
func encapModes(encap string) (ipip, vxlan any) {
	switch encap {
	case "vxlan":
		return "Never", "Always"
	case "ipip":
		return "Always", "Never"
	}
	return "Never", "Never"
}

// withEncapsulation sets the encapsulation of the Installation's IPv4 pools.
func withEncapsulation(pools any, encap string) any {
	list, ok := normal(pools).([]any)
	if !ok {
		return pools
	}
	val := map[string]string{"vxlan": "VXLAN", "ipip": "IPIP", "none": "None"}[encap]
	for _, p := range list {
		if m, ok := p.(map[string]any); ok && isIPv4CIDR(str(m["cidr"])) {
			m["encapsulation"] = val
		}
	}
	return list
}

// withCPULimit sets calico-node's CPU limit in an Installation's calicoNodeDaemonSet ("0"
// removes the override, as tiger-bench does).
func withCPULimit(ds any, limit string) any {
	if q, err := resource.ParseQuantity(limit); err == nil && q.IsZero() {
		return nil
	}
	return map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"containers": []any{map[string]any{"name": "calico-node", "resources": map[string]any{"limits": map[string]any{"cpu": limit}}}},
	}}}}
}

// checkBPFPrerequisite: the operator needs to know how to reach the API server without
// kube-proxy before it switches to BPF.
func (c *Calico) checkBPFPrerequisite(ctx context.Context) error {
	if c.Client == nil {
		return nil
	}
	_, err := c.Client.CoreV1().ConfigMaps("tigera-operator").Get(ctx, "kubernetes-services-endpoint", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return errors.New("dataplane bpf: the operator needs the ConfigMap tigera-operator/kubernetes-services-endpoint (KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT of the API server) before it can switch to eBPF; create it first (see Calico's \"Enable the eBPF dataplane\")")
	}
	if err != nil {
		return fmt.Errorf("dataplane bpf: check ConfigMap tigera-operator/kubernetes-services-endpoint: %w", err)
	}
	return nil
}

// DefaultSettleGrace is how long cnperf gives felix to apply a change before it judges a
// rollout or, with nothing to watch, measures. Felix applies an IPPool or FelixConfiguration
// change without a restart, and nothing in the API says when it has: tiger-bench waits 7 s
// before it reads the operator's status and 10 s for felix to log a change. On the e2e
// cluster (Calico without a calico-node DaemonSet) a TCP_STREAM started at once after VXLAN
// was switched back on failed to connect.
const DefaultSettleGrace = 10 * time.Second

// settle waits until calico-node has rolled out the change (restarting its pods first when
// asked, as tiger-bench does for CPU limits) and the operator reports Calico available.
func (c *Calico) settle(ctx context.Context, restart bool) error {
	timeout := c.SettleTimeout
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	grace := c.SettleGrace
	if grace <= 0 {
		grace = DefaultSettleGrace
	}
	if c.Client == nil {
		return nil
	}
	ds, ns := c.calicoNodeDaemonSet(ctx)
	if ds == nil {
		c.logf("no calico-node DaemonSet found (calico-system, kube-system): no rollout to watch; giving felix %s to apply the change", grace)
	} else if restart {
		if err := c.Client.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "k8s-app=calico-node"}); err != nil {
			c.logf("warning: restart calico-node pods: %v (they will restart by themselves, more slowly)", err)
		}
	}
	start := time.Now()
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// Give the operator and felix time to act on the change before judging the rollout (or,
	// without a DaemonSet, before anything is measured).
	select {
	case <-wctx.Done():
	case <-time.After(grace):
	}
	if ds == nil {
		return ctx.Err()
	}
	err := wait.PollUntilContextCancel(wctx, 2*time.Second, true, func(ctx context.Context) (bool, error) {
		d, err := c.Client.AppsV1().DaemonSets(ns).Get(ctx, "calico-node", metav1.GetOptions{})
		if err != nil || !daemonSetReady(d) {
			return false, nil
		}
		ts, found, err := c.get(ctx, GVRTigerStatus, "calico")
		if err != nil || !found {
			return err == nil, nil
		}
		return conditionTrue(ts, "Available") && !conditionTrue(ts, "Progressing"), nil
	})
	if err != nil {
		return fmt.Errorf("calico-node did not settle within %s after the change: %w", timeout, err)
	}
	c.logf("calico-node settled in %.0fs", time.Since(start).Seconds())
	return nil
}

func (c *Calico) calicoNodeDaemonSet(ctx context.Context) (*appsv1.DaemonSet, string) {
	for _, ns := range []string{"calico-system", "kube-system"} {
		if d, err := c.Client.AppsV1().DaemonSets(ns).Get(ctx, "calico-node", metav1.GetOptions{}); err == nil {
			return d, ns
		}
	}
	return nil, ""
}

func daemonSetReady(d *appsv1.DaemonSet) bool {
	s := d.Status
	return s.ObservedGeneration >= d.Generation && s.DesiredNumberScheduled > 0 &&
		s.UpdatedNumberScheduled == s.DesiredNumberScheduled && s.NumberReady == s.DesiredNumberScheduled
}

func conditionTrue(u *unstructured.Unstructured, typ string) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if ok && m["type"] == typ {
			return m["status"] == "True"
		}
	}
	return false
}
