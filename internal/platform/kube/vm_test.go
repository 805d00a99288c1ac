package kube

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/guestexec"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/kube/kubetest"
)

// nativeDriver lists the agent's server on the native driver's default ports, as the guest runs it.
var nativeDriver = specDriver{"native", []driver.Server{{Name: "native", Argv: []string{"cnperf", "agent", "serve"},
	Ports: []driver.Port{{Name: "control", Port: 7100, Protocol: "TCP"}, {Name: "data-tcp", Port: 7101, Protocol: "TCP"}}}}}

// TestVMOptions: the VM flags, each bad value refused naming its flag.
func TestVMOptions(t *testing.T) {
	img := "localhost/guest:v1"
	tests := []struct {
		name string
		o    Options
		want string // error; "" for none
		vcpu int
	}{
		{name: "no vm", o: Options{}},
		{name: "both", o: Options{VM: "both", VMImage: img}, vcpu: 1},
		{name: "topology", o: Options{VM: "server", VMImage: img, VMSockets: 2, VMCores: 2, VMThreads: 1}, vcpu: 4},
		{name: "bridge", o: Options{VM: "client", VMImage: img, VMBinding: "bridge"}, vcpu: 1},
		{name: "bad role", o: Options{VM: "yes", VMImage: img}, want: `--vm: "yes" is not server, client or both`},
		{name: "no image", o: Options{VM: "both"}, want: "--vm needs --vm-image IMAGE"},
		{name: "bad binding", o: Options{VM: "both", VMImage: img, VMBinding: "l2bridge"}, want: `--vm-binding: "l2bridge" is not masquerade, bridge or passt`},
		{name: "too many sockets", o: Options{VM: "both", VMImage: img, VMSockets: 65}, want: "--sockets: 65 is not in 1..64"},
		{name: "negative cores", o: Options{VM: "both", VMImage: img, VMCores: -1}, want: "--cores: -1 is not in 1..64"},
		{name: "bad memory", o: Options{VM: "both", VMImage: img, VMMemory: "lots"}, want: `--vm-memory: "lots" is not a quantity`},
		{name: "small memory", o: Options{VM: "both", VMImage: img, VMMemory: "64Mi"}, want: `--vm-memory: "64Mi" is not a quantity of at least 128Mi`},
		{name: "image without vm", o: Options{VMImage: img}, want: "--vm-image: only with --vm"},
		{name: "threads without vm", o: Options{VMThreads: 2}, want: "--threads: only with --vm"},
		{name: "use-virtctl", o: Options{VM: "both", VMImage: img, VMUseVirtctl: true}, vcpu: 1},
		{name: "use-virtctl without vm", o: Options{VMUseVirtctl: true}, want: "--use-virtctl: only with --vm"},
		{name: "negative start timeout", o: Options{VM: "both", VMImage: img, VMStartTimeout: -time.Minute},
			want: "--vm-start-timeout: -1m0s is negative (0 is the default, 10m0s)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := tt.o.parse()
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("error %v, want %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.o.VM == "" {
				if s.vmServer || s.vmClient {
					t.Error("VMs without --vm")
				}
				return
			}
			if got := s.vmInfo("x", false).VCPUs; got != tt.vcpu {
				t.Errorf("vCPUs %d, want %d", got, tt.vcpu)
			}
			if s.vmServer != (tt.o.VM != "client") || s.vmClient != (tt.o.VM != "server") {
				t.Errorf("--vm %s: server %v, client %v", tt.o.VM, s.vmServer, s.vmClient)
			}
		})
	}
}

// TestVMSettingError: each refused VM setting names its flag in the message and its name in a
// plan's vm block (api.PlanVM's JSON field), so that cnperf run reports a plan's value at its line.
func TestVMSettingError(t *testing.T) {
	img := "localhost/guest:v1"
	for _, tt := range []struct {
		o                      Options
		setting, flag, problem string
	}{
		{Options{VM: "yes", VMImage: img}, "endpoints", "--vm", `"yes" is not server, client or both`},
		{Options{VM: "both"}, "image", "--vm-image", "missing: the cnperf guest image, whose /init runs the cnperf agent (docs/vm.md)"},
		{Options{VM: "both", VMImage: img, VMBinding: "tap"}, "binding", "--vm-binding", `"tap" is not masquerade, bridge or passt`},
		{Options{VM: "both", VMImage: img, VMThreads: 65}, "threads", "--threads", "65 is not in 1..64"},
		{Options{VM: "both", VMImage: img, VMMemory: "1"}, "memory", "--vm-memory", `"1" is not a quantity of at least 128Mi, e.g. 512Mi`},
		{Options{VM: "both", VMImage: img, VMStartTimeout: -1}, "startTimeout", "--vm-start-timeout", "-1ns is negative (0 is the default, 10m0s)"},
		{Options{VMCores: 2}, "cores", "--cores", "only with --vm (server, client or both)"},
	} {
		_, err := tt.o.parse()
		var se *VMSettingError
		if !errors.As(err, &se) {
			t.Errorf("%+v: error %v, want a *VMSettingError", tt.o, err)
			continue
		}
		if se.Setting != tt.setting || se.Flag != tt.flag || se.Problem != tt.problem {
			t.Errorf("%+v: setting %q, flag %q, problem %q; want %q, %q, %q", tt.o, se.Setting, se.Flag, se.Problem, tt.setting, tt.flag, tt.problem)
		}
	}
}

// TestVMCheckPath: a VM endpoint runs the drivers whose tools are in the guest (the native
// driver alone when none are named), on the direct pod-to-pod paths only; another driver is
// refused naming it and what the guest has.
func TestVMCheckPath(t *testing.T) {
	c := newCluster(t, node("node1", ""), node("node2", ""))
	guest := map[string][]string{"native": nil, "netperf": {"netperf", "netserver"}, "iperf3": {"iperf3"}}
	for _, tt := range []struct {
		tools  map[string][]string
		driver string
		path   api.Path
		want   string
	}{
		{nil, "native", api.PathPodPodCrossNode, ""},
		{nil, "native", api.PathPodPodSameNode, ""},
		{nil, "netperf", api.PathPodPodCrossNode, "--vm: driver netperf: its tools are not in the cnperf guest, which has cnperf; " +
			"VM endpoints run the native driver"},
		{guest, "netperf", api.PathPodPodCrossNode, ""},
		{guest, "iperf3", api.PathPodPodSameNode, ""},
		{guest, "qperf", api.PathPodPodCrossNode, "--vm: driver qperf: its tools are not in the cnperf guest, which has cnperf, iperf3, " +
			"netperf, netserver; VM endpoints run the drivers iperf3, native, netperf"},
		{guest, "netperf", api.PathPodClusterIP, ""},
		{guest, "netperf", api.PathPodNodePort, "--vm: path pod-nodeport: VM endpoints are on the pod network (or the run's " +
			"secondary network), reached at their address or a ClusterIP (use pod-pod-same-node, pod-pod-cross-node, pod-clusterip)"},
		{nil, "native", api.PathHostHost, "--vm: path host-host"},
	} {
		p := newTestPlatform(t, c, Options{VM: "both", VMImage: "g", VMGuestTools: tt.tools})
		err := p.CheckPath(casesWith([]string{tt.driver}, []api.Path{tt.path})[0])
		onNet := networkCases("ns/net", tt.path)[0]
		onNet.Driver = tt.driver
		// a ClusterIP is on the default network: a secondary network's case is refused there
		if err2 := p.CheckPath(onNet); (err2 == nil) != (tt.want == "" && tt.path != api.PathPodClusterIP) {
			t.Errorf("%s %s on a secondary network: %v", tt.driver, tt.path, err2)
		}
		if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s %s (guest %v): %v, want %q", tt.driver, tt.path, tt.tools, err, tt.want)
		}
	}
}

// TestVMServers: a VM server runs the agent's server on the agent's ports only, and another
// driver's servers beside it on their own ports (not the agent's); the VMI names the agent's
// ports and the servers' (passt forwards those only); the servers started through the exec
// port are the other drivers'.
func TestVMServers(t *testing.T) {
	agent := driver.Server{Name: "native", Argv: []string{"cnperf", "agent", "serve"},
		Ports: []driver.Port{{Name: "control", Port: 7100, Protocol: "TCP"}, {Name: "data", Port: 7101, Protocol: "TCP"}}}
	netserver := driver.Server{Name: "netperf", Argv: []string{"netserver", "-D", "-p", "12865"},
		Ports: []driver.Port{{Name: "control", Port: 12865, Protocol: "TCP"}, {Name: "data-0", Port: 12866, Protocol: "TCP"},
			{Name: "data-0-udp", Port: 12866, Protocol: "UDP"}}}
	agentPorts := []kube.VMPort{{Port: 7100, Protocol: "TCP"}, {Port: 7101, Protocol: "TCP"}, {Port: 7101, Protocol: "UDP"}, {Port: 7102, Protocol: "TCP"}}
	for _, tt := range []struct {
		name    string
		servers []driver.Server
		err     string
		ports   []kube.VMPort
		started []string
	}{
		{name: "native", servers: []driver.Server{agent}, ports: agentPorts},
		{name: "netperf", servers: []driver.Server{netserver}, started: []string{"netperf"},
			ports: append(slices.Clone(agentPorts), kube.VMPort{Port: 12865, Protocol: "TCP"}, kube.VMPort{Port: 12866, Protocol: "TCP"},
				kube.VMPort{Port: 12866, Protocol: "UDP"})},
		{name: "native on other ports", servers: []driver.Server{{Name: "native-7200", Argv: []string{"cnperf"},
			Ports: []driver.Port{{Port: 7200, Protocol: "TCP"}}}},
			err: "--vm: server native-7200 needs port 7200; the agent in the cnperf guest listens on 7100 (control) and 7101 (data) only"},
		{name: "netperf on the exec port", servers: []driver.Server{{Name: "netperf-7102", Argv: []string{"netserver"},
			Ports: []driver.Port{{Port: 7102, Protocol: "TCP"}}}},
			err: "--vm: server netperf-7102 needs port 7102, which the cnperf guest's agent listens on (7100, 7101, 7102)"},
	} {
		e := endpointSpec{Name: "srv", Role: "server", VM: true, Servers: tt.servers}
		err := checkVMServers(e)
		if (err == nil) != (tt.err == "") || (err != nil && err.Error() != tt.err) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.err)
		}
		if tt.err != "" {
			continue
		}
		if got := vmPorts(e); !slices.Equal(got, tt.ports) {
			t.Errorf("%s: VMI ports %v, want %v", tt.name, got, tt.ports)
		}
		var started []string
		for _, s := range guestServers(e) {
			started = append(started, s.Name)
		}
		if !slices.Equal(started, tt.started) {
			t.Errorf("%s: started in the guest %v, want %v", tt.name, started, tt.started)
		}
	}
}

// TestPasstGate: the passt binding is refused before anything is created when the KubeVirt
// resource read lacks the feature gate Passt, with the command that turns it on (its gates kept);
// other bindings need no gate, and an unread resource (RBAC) is not guessed at.
func TestPasstGate(t *testing.T) {
	read := func(gates ...string) kube.VMSupport {
		return kube.VMSupport{Read: true, FeatureGates: gates, Namespace: "kubevirt", Name: "kubevirt", Version: "v1.0.1"}
	}
	for _, tt := range []struct {
		name, binding string
		kv            kube.VMSupport
		want          string // error; "" for none
	}{
		{"gate on", "passt", read("Root", "Passt"), ""},
		{"gate off", "passt", read("Root"), "--vm-binding passt: stopped before anything was created: KubeVirt's feature gate Passt is not " +
			"enabled (KubeVirt kubevirt/kubevirt, developerConfiguration.featureGates: Root); turn it on with `kubectl -n kubevirt patch " +
			`kubevirt kubevirt --type=merge -p '{"spec":{"configuration":{"developerConfiguration":{"featureGates":["Root","Passt"]}}}}'` +
			"`, or use --vm-binding masquerade or bridge"},
		{"no gates", "passt", read(), `developerConfiguration.featureGates: none); turn it on with ` +
			"`kubectl -n kubevirt patch kubevirt kubevirt --type=merge -p " +
			`'{"spec":{"configuration":{"developerConfiguration":{"featureGates":["Passt"]}}}}'` + "`"},
		{"not read", "passt", kube.VMSupport{}, ""},
		{"masquerade", "masquerade", read(), ""},
		{"bridge", "bridge", read("Root"), ""},
	} {
		err := passtGate(tt.binding, tt.kv)
		if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}

// memVMIs keeps VMIs in memory; phase is the phase every VMI reports.
type memVMIs struct {
	mu      sync.Mutex
	created map[string][]byte
	phase   string
}

func (m *memVMIs) Create(_ context.Context, ns string, body []byte, _ bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var o struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	if err := json.Unmarshal(body, &o); err != nil {
		return err
	}
	m.created[ns+"/"+o.Metadata.Name] = body
	return nil
}

func (m *memVMIs) Get(_ context.Context, ns, name string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.created[ns+"/"+name]; !ok {
		return nil, errors.New("not found")
	}
	return json.Marshal(map[string]any{"metadata": map[string]any{"name": name}, "status": map[string]any{"phase": m.phase,
		"conditions": []any{map[string]any{"type": "Ready", "status": "False", "reason": "GuestNotRunning", "message": "the guest stopped"}}}})
}

func (m *memVMIs) List(context.Context, string, string) ([]metav1.ObjectMeta, error) { return nil, nil }
func (m *memVMIs) Delete(context.Context, string, string) error                      { return nil }

// TestVMPrepare: without KubeVirt the run stops before anything is created (exit status 2, the
// CRD named); with it, the VMIs of the VM endpoints are created (the relay pod beside them) and
// a VM that fails is said with its phase and conditions. The token is nowhere in a VMI: it names
// the run's Secret, which KubeVirt hands the guest as a disk.
func TestVMPrepare(t *testing.T) {
	cases := casesWith([]string{"native"}, []api.Path{api.PathPodPodCrossNode})
	drivers := map[string]driver.Driver{"native": nativeDriver}
	t.Run("no KubeVirt", func(t *testing.T) {
		c := newCluster(t, node("node1", ""), node("node2", ""))
		p := newTestPlatform(t, c, Options{VM: "server", VMImage: "g"})
		defer func() { _ = p.Close(context.Background()) }()
		err := p.Prepare(context.Background(), cases, drivers)
		var ue *exit.UsageError
		if err == nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), "--vm: stopped before anything was created: KubeVirt is not installed: the CRD virtualmachineinstances.kubevirt.io is missing") {
			t.Fatalf("error %v, want a usage error naming the CRD", err)
		}
		if nss, _ := c.cs.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{}); len(nss.Items) > 0 {
			t.Errorf("namespace %s created", nss.Items[0].Name)
		}
	})
	// KubeVirt's resource, read, lacks the feature gate Passt: passt stops before anything is
	// created (exit status 2); when it cannot be read the run says so and goes on
	for _, tt := range []struct {
		name string
		kv   kube.VMSupport
		want string // error; "" for none (the VMs are created)
		note string // what the run says
	}{
		{"Passt off", kube.VMSupport{Read: true, FeatureGates: []string{"Root"}, Namespace: "kubevirt", Name: "kubevirt"},
			"--vm-binding passt: stopped before anything was created: KubeVirt's feature gate Passt is not enabled", ""},
		{"Passt unknown", kube.VMSupport{}, "", "KubeVirt's feature gate Passt could not be checked"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster(t, node("node1", ""), node("node2", ""))
			var log strings.Builder
			p, err := NewWithClient(Options{VM: "server", VMImage: "g", VMBinding: "passt", VMStartTimeout: time.Second}, testRun, &log, c.cs, nil)
			if err != nil {
				t.Fatal(err)
			}
			p.checkKV = func(context.Context, kubernetes.Interface) kube.VMSupport { return tt.kv }
			vmis := &memVMIs{created: map[string][]byte{}, phase: "Failed"}
			p.vmis = vmis
			defer func() { _ = p.Close(context.Background()) }()
			err = p.Prepare(context.Background(), cases, drivers)
			var ue *exit.UsageError
			if tt.want != "" {
				if err == nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("error %v, want a usage error %q", err, tt.want)
				}
				if nss, _ := c.cs.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{}); len(nss.Items) > 0 {
					t.Errorf("namespace %s created", nss.Items[0].Name)
				}
				return
			}
			if len(vmis.created) != 1 {
				t.Errorf("error %v; created %d VMIs, want the server's", err, len(vmis.created))
			}
			if !strings.Contains(strings.Join(strings.Fields(log.String()), " "), tt.note) {
				t.Errorf("the run said %q, want %q", log.String(), tt.note)
			}
		})
	}
	t.Run("VM fails", func(t *testing.T) {
		c := newCluster(t, node("node1", ""), node("node2", ""))
		c.cs.Resources = append(c.cs.Resources, &metav1.APIResourceList{GroupVersion: "kubevirt.io/v1",
			APIResources: []metav1.APIResource{{Name: "virtualmachineinstances", Namespaced: true, Kind: "VirtualMachineInstance"}}})
		p := newTestPlatform(t, c, Options{VM: "both", VMImage: "g", VMStartTimeout: 20 * time.Second})
		vmis := &memVMIs{created: map[string][]byte{}, phase: "Failed"}
		p.vmis = vmis
		defer func() { _ = p.Close(context.Background()) }()
		err := p.Prepare(context.Background(), cases, drivers)
		if err == nil || !strings.Contains(err.Error(), "its phase is Failed; conditions: Ready: GuestNotRunning the guest stopped; no launcher pod") {
			t.Fatalf("error %v, want the VM's phase and conditions", err)
		}
		if len(vmis.created) != 2 {
			t.Fatalf("created %d VMIs, want the server's and the client's", len(vmis.created))
		}
		// the token is nowhere in the VMI (anyone who may read VMIs would read it): the guest
		// gets the run's Secret as a disk (the volume names the Secret, the disk the volume)
		var vmi struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
			Spec     struct {
				Domain struct {
					Devices struct {
						Disks []struct{ Name, Serial string } `json:"disks"`
					} `json:"devices"`
				} `json:"domain"`
				Volumes []struct {
					Name   string `json:"name"`
					Secret struct {
						SecretName string `json:"secretName"`
					} `json:"secret"`
				} `json:"volumes"`
			} `json:"spec"`
		}
		if len(p.s.AgentToken) != 64 {
			t.Fatalf("the run's token has %d characters, want 64", len(p.s.AgentToken))
		}
		for _, body := range vmis.created {
			if err := json.Unmarshal(body, &vmi); err != nil {
				t.Fatal(err)
			}
			if vmi.Metadata.Labels[kube.LabelRun] != testRun {
				t.Errorf("VMI %s: labels %v", vmi.Metadata.Name, vmi.Metadata.Labels)
			}
			if strings.Contains(string(body), p.s.AgentToken) {
				t.Errorf("VMI %s holds the agent token: %s", vmi.Metadata.Name, body)
			}
			v, d := vmi.Spec.Volumes, vmi.Spec.Domain.Devices.Disks
			if len(v) != 1 || v[0].Secret.SecretName != kube.TokenSecretName(testRun) || len(d) != 1 || d[0].Name != v[0].Name ||
				d[0].Serial != kube.GuestTokenSerial {
				t.Errorf("VMI %s: volumes %+v, disks %+v, want the token Secret %s as a disk with serial %s", vmi.Metadata.Name, v, d,
					kube.TokenSecretName(testRun), kube.GuestTokenSerial)
			}
		}
		if sec, err := c.cs.CoreV1().Secrets("cnperf").Get(context.Background(), kube.TokenSecretName(testRun), metav1.GetOptions{}); err != nil ||
			string(sec.Data[kube.TokenSecretKey]) != p.s.AgentToken {
			t.Errorf("the token Secret the VMIs name: %v", err)
		}
		if _, err := c.cs.CoreV1().Pods("cnperf").Get(context.Background(), relayName(testRun), metav1.GetOptions{}); err != nil {
			t.Errorf("relay pod: %v", err)
		}
		if _, err := c.cs.CoreV1().Pods("cnperf").Get(context.Background(), serverPodName(testRun, "native", api.NetworkPod), metav1.GetOptions{}); err == nil {
			t.Error("a server pod beside the server VM")
		}
	})
}

// TestVMStaticAddresses: the VMs' static addresses on a secondary network without IPAM
// (k8s-netperf's bridgeNetwork.json): the server's, the clients' from bridgeClientNetwork on
// (never the server's), refused when they are not addresses of one network or run out.
func TestVMStaticAddresses(t *testing.T) {
	for _, tt := range []struct {
		server, client string
		want           []string // server, client 1, client 2, ...
		err            string
	}{
		{"", "", []string{"10.10.10.12/24", "10.10.10.14/24", "10.10.10.15/24"}, ""},
		{"192.168.5.2/24", "192.168.5.1/24", []string{"192.168.5.2/24", "192.168.5.1/24", "192.168.5.3/24"}, ""},
		{"192.168.5.2/29", "192.168.5.1/29", []string{"192.168.5.2/29", "192.168.5.1/29", "192.168.5.3/29"}, ""},
		{"192.168.5.1/30", "192.168.5.2/30", []string{"192.168.5.1/30", "192.168.5.2/30", ""},
			"VM client 2: no address left on 192.168.5.0/30 after 192.168.5.2 (--bridgeNetwork)"},
		{"10.0.0.1/24", "10.0.0.255/24", nil, "bridgeClientNetwork: 10.0.0.255/24 is the network's broadcast address"},
		{"fd00::2/64", "fd00::3/64", []string{"fd00::2/64", "fd00::3/64", "fd00::4/64"}, ""},
		{"10.0.0.1/24", "10.0.1.1/24", nil, "bridgeServerNetwork 10.0.0.1/24 and bridgeClientNetwork 10.0.1.1/24 are not on the same network"},
		{"10.0.0.1/24", "10.0.0.1/24", nil, "both are 10.0.0.1"},
		{"10.0.0.0/24", "10.0.0.1/24", nil, "bridgeServerNetwork: 10.0.0.0/24 is the network's own address"},
		{"10.0.0.1", "10.0.0.2/24", nil, `bridgeServerNetwork: "10.0.0.1" is not an address in CIDR notation`},
	} {
		o := Options{VM: "both", VMImage: "g", VMNetworkServer: tt.server, VMNetworkClient: tt.client}
		s, err := o.parse()
		if tt.want == nil {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s %s: %v, want %q", tt.server, tt.client, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s %s: %v", tt.server, tt.client, err)
		}
		var got []string
		a, _ := s.vmStaticAddress("server", 0)
		got = append(got, a)
		var lastErr error
		for n := range len(tt.want) - 1 {
			a, err := s.vmStaticAddress("client", n)
			got, lastErr = append(got, a), err
		}
		if strings.Join(got, " ") != strings.Join(tt.want, " ") || (lastErr == nil) != (tt.err == "") || (lastErr != nil && lastErr.Error() != tt.err) {
			t.Errorf("%s %s: %v (%v), want %v (%q)", tt.server, tt.client, got, lastErr, tt.want, tt.err)
		}
	}
}

// noIPAMNAD is a bridge definition on the nodes' mbr0 without IPAM (k8s-netperf's br-netperf's
// kind), as the API server returns it.
const noIPAMNAD = `{"apiVersion":"k8s.cni.cncf.io/v1","kind":"NetworkAttachmentDefinition","metadata":{"name":"br","namespace":"vmnet"},` +
	`"spec":{"config":"{\"cniVersion\": \"0.3.1\", \"type\": \"bridge\", \"name\": \"br\", \"bridge\": \"mbr0\"}"}}`

// TestVMSecondaryNetwork: VMs on a secondary network get a second interface there (bridge
// binding, a MAC of their own); on a definition without IPAM each guest is told its static
// address (cnperf.static=MAC,ADDRESS on its kernel command line), on one with IPAM none (the
// guest asks DHCP); a pod beside VMs on a definition without IPAM stops the run before anything
// is created.
func TestVMSecondaryNetwork(t *testing.T) {
	drivers := map[string]driver.Driver{"native": nativeDriver}
	for _, tt := range []struct {
		name, vm, nad string
		bridgeNetwork bool // --bridgeNetwork given (the VMs' static addresses)
		paths         []api.Path
		static        []string // the cnperf.static= arguments of the VMIs, sorted ("-": none)
		err           string   // a usage error before anything is created
	}{
		{"no IPAM", "both", noIPAMNAD, false, []api.Path{api.PathPodPodSameNode, api.PathPodPodCrossNode},
			[]string{"10.10.10.12/24", "10.10.10.14/24", "10.10.10.15/24"}, ""},
		{"no IPAM, --bridgeNetwork", "both", noIPAMNAD, true, []api.Path{api.PathPodPodCrossNode},
			[]string{"10.10.10.22/24", "10.10.10.24/24"}, ""},
		{"IPAM", "both", kubetest.BridgeNAD, false, []api.Path{api.PathPodPodCrossNode}, []string{"-", "-"}, ""},
		{"IPAM, pod client", "server", kubetest.BridgeNAD, false, []api.Path{api.PathPodPodCrossNode}, []string{"-"}, ""},
		{"IPAM, --bridgeNetwork", "both", kubetest.BridgeNAD, true, []api.Path{api.PathPodPodCrossNode}, nil,
			"--bridgeNetwork with secondary network vmnet/br: its definition has IPAM (whereabouts)"},
		{"no IPAM, pod client", "server", noIPAMNAD, false, []api.Path{api.PathPodPodCrossNode}, nil,
			"--vm=server on secondary network vmnet/br: its definition has no IPAM, so the client cnperf-cli-attachment-c-"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster(t, node("node1", ""), node("node2", ""))
			c.cs.Resources = append(c.cs.Resources, &metav1.APIResourceList{GroupVersion: "kubevirt.io/v1",
				APIResources: []metav1.APIResource{{Name: "virtualmachineinstances", Namespaced: true, Kind: "VirtualMachineInstance"}}})
			o := Options{VM: tt.vm, VMImage: "g", VMStartTimeout: time.Second}
			if tt.bridgeNetwork {
				o.VMNetworkServer, o.VMNetworkClient = "10.10.10.22/24", "10.10.10.24/24"
			}
			p := newTestPlatform(t, c, o)
			vmis := &memVMIs{created: map[string][]byte{}, phase: "Failed"}
			p.vmis = vmis
			p.nads = &kubetest.NADs{Answer: func(context.Context, string, string) ([]byte, error) { return []byte(tt.nad), nil }}
			defer func() { _ = p.Close(context.Background()) }()
			cases := networkCases("vmnet/br", tt.paths...)
			for i := range cases {
				cases[i].Driver = "native"
			}
			err := p.Prepare(context.Background(), cases, drivers)
			var ue *exit.UsageError
			if tt.err != "" {
				if !errors.As(err, &ue) || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want a usage error %q", err, tt.err)
				}
				if nss, _ := c.cs.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{}); len(nss.Items) > 0 {
					t.Errorf("namespace %s created", nss.Items[0].Name)
				}
				return
			}
			var static []string
			for name, body := range vmis.created {
				var vmi struct {
					Spec struct {
						Domain struct {
							Firmware struct {
								KernelBoot struct {
									KernelArgs string `json:"kernelArgs"`
								} `json:"kernelBoot"`
							} `json:"firmware"`
							Devices struct {
								Interfaces []map[string]any `json:"interfaces"`
							} `json:"devices"`
						} `json:"domain"`
						Networks []struct {
							Name   string            `json:"name"`
							Multus map[string]string `json:"multus"`
						} `json:"networks"`
					} `json:"spec"`
				}
				if err := json.Unmarshal(body, &vmi); err != nil {
					t.Fatal(err)
				}
				ifs, nets := vmi.Spec.Domain.Devices.Interfaces, vmi.Spec.Networks
				mac := kube.SecondaryMAC(strings.TrimPrefix(name, "cnperf/"))
				if len(ifs) != 2 || ifs[1]["bridge"] == nil || ifs[1]["macAddress"] != mac || len(nets) != 2 || nets[1].Multus["networkName"] != "vmnet/br" {
					t.Errorf("VMI %s: interfaces %v, networks %+v, want a bridge interface with MAC %s on vmnet/br", name, ifs, nets, mac)
				}
				arg := "-"
				for _, a := range strings.Fields(vmi.Spec.Domain.Firmware.KernelBoot.KernelArgs) {
					if v, ok := strings.CutPrefix(a, "cnperf.static="+mac+","); ok {
						arg = v
					}
				}
				static = append(static, arg)
			}
			sort.Strings(static)
			if strings.Join(static, " ") != strings.Join(tt.static, " ") {
				t.Errorf("static addresses %v, want %v (error %v)", static, tt.static, err)
			}
		})
	}
}

// TestVMServersStartStop: once a server VM answers, its driver's servers (not the agent's)
// start in its guest through the relay pod's `cnperf agent exec --background`, ready by their
// first TCP port; a server the guest cannot start fails the run naming the VM and the server,
// with the guest's words; at clean-up each guest whose servers started is asked to stop them.
func TestVMServersStartStop(t *testing.T) {
	agent := driver.Server{Name: "native", Argv: []string{"cnperf", "agent", "serve"}, Ports: []driver.Port{{Port: 7100, Protocol: "TCP"}}}
	netserver := driver.Server{Name: "netperf", Argv: []string{"netserver", "-D", "-p", "12865"},
		Ports: []driver.Port{{Name: "control", Port: 12865, Protocol: "TCP"}}}
	for _, tt := range []struct {
		name    string
		servers []driver.Server
		answer  guestexec.Response
		want    []string // the guest commands the relay ran, in order: start(s), then stop(s)
		err     string
	}{
		{name: "native: the agent only", servers: []driver.Server{agent}},
		{name: "netperf", servers: []driver.Server{netserver},
			want: []string{"--background --ready-port 12865 -- netserver -D -p 12865", "--stop"}},
		{name: "refused", servers: []driver.Server{netserver},
			answer: guestexec.Response{ExitCode: -1, Error: "netserver is not in this guest: exec: \"netserver\": executable file not found in $PATH"},
			want:   []string{"--background --ready-port 12865 -- netserver -D -p 12865"},
			err: "VM cnperf/srv: start server netperf (netserver -D -p 12865): in VM 10.244.1.7: netserver is not in this guest: " +
				"exec: \"netserver\": executable file not found in $PATH"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster(t, node("node1", ""), node("node2", ""))
			p := newTestPlatform(t, c, Options{VM: "server", VMImage: "g"})
			var ran []string
			p.stream = func(_ context.Context, ns, pod, _ string, argv []string, stdout, _ io.Writer) error {
				if ns != "cnperf" || pod != relayName(testRun) {
					t.Errorf("exec in %s/%s, want the relay pod", ns, pod)
				}
				joined := strings.Join(argv, " ")
				i := strings.Index(joined, "cnperf agent exec --json --host 10.244.1.7 --port 7102 --timeout ")
				if i < 0 {
					t.Fatalf("relay ran %q", joined)
				}
				rest := joined[i+len("cnperf agent exec --json --host 10.244.1.7 --port 7102 --timeout "):]
				ran = append(ran, rest[strings.Index(rest, " ")+1:])
				b, _ := json.Marshal(tt.answer)
				_, _ = stdout.Write(append(b, '\n'))
				return nil
			}
			p.relay = &endpoint{spec: endpointSpec{Name: relayName(testRun), Role: "client"}, pod: &corev1.Pod{}}
			ep := &endpoint{spec: endpointSpec{Name: "srv", Role: "server", VM: true, Servers: tt.servers}, vmi: &kube.VMIStatus{IP: "10.244.1.7"}}
			p.servers = map[serverKey]*endpoint{{"x", api.NetworkPod}: ep}
			err := p.startVMServers(context.Background(), ep)
			if (err == nil) != (tt.err == "") || (err != nil && err.Error() != tt.err) {
				t.Errorf("start: %v, want %q", err, tt.err)
			}
			p.stopVMServers(context.Background())
			if !slices.Equal(ran, tt.want) {
				t.Errorf("the relay ran %q, want %q", ran, tt.want)
			}
		})
	}
}
