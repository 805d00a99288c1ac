package mesh

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/plan"
)

// Ways to reach the all-to-one server.
const (
	ViaDirect  = "direct"
	ViaService = "service"
)

// OneServer is the all-to-one server: one pod on the server node running one driver server
// per client (so that clients can run at once: most servers serve one test at a time), each
// on its own ports, and a ClusterIP Service over all of them.
type OneServer struct {
	Network   api.Network
	Pod       Agent
	ServiceIP string
	// Options are the case options that point client i at server i (its ports).
	Options []map[string]string
	// policiesIn are the NetworkPolicies that select the pod for ingress, on a secondary
	// network (where they do not apply).
	policiesIn []string
}

// ServerPortOptions returns the case options that put server i on ports base+2i, base+2i+1
// (a control and a data port), or on base+2i for a server with one port (iperf3; iperf2's and
// sockperf's IPv6 server takes the next), for n servers. A driver that cannot move its server
// gets one server on its default ports, which is enough only when clients take turns.
func ServerPortOptions(d driver.Driver, base, n int) ([]map[string]string, error) {
	pm, ok := d.(driver.PortMover)
	if !ok {
		if n > 1 {
			return nil, fmt.Errorf("driver %s cannot move its server to other ports, so clients cannot run at once against one node (drop --concurrent or use --driver native)", d.Name())
		}
		return []map[string]string{nil}, nil
	}
	out := make([]map[string]string, n)
	for i := range out {
		out[i] = pm.PortOptions([]int{base + 2*i, base + 2*i + 1})
		if out[i] == nil {
			out[i] = pm.PortOptions([]int{base + 2*i})
		}
		if out[i] == nil && i > 0 {
			return nil, fmt.Errorf("driver %s cannot move its server to ports %d,%d", d.Name(), base+2*i, base+2*i+1)
		}
	}
	return out, nil
}

// DeployOneServer starts the all-to-one server pod and its Service on node for net and waits
// until they are ready.
func DeployOneServer(ctx context.Context, cs kubernetes.Interface, o AgentOptions, net api.Network, node string, c plan.Case, d driver.Driver, options []map[string]string, timeout time.Duration) (*OneServer, error) {
	pod, svc, err := buildOneServer(o, net, node, c, d, options)
	if err != nil {
		return nil, err
	}
	name := pod.Name
	if _, err := cs.CoreV1().Pods(o.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("create all-to-one server pod %s/%s: %w", o.Namespace, name, err)
	}
	created, err := cs.CoreV1().Services(o.Namespace).Create(ctx, svc, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("create all-to-one Service %s/%s: %w", o.Namespace, name, err)
	}
	if timeout <= 0 {
		timeout = 3 * time.Minute
	}
	pods, err := kube.WaitReady(ctx, cs, o.Namespace, kube.LabelEndpoint+"="+name, []string{name}, timeout)
	if err != nil {
		return nil, fmt.Errorf("all-to-one server pod %s on node %s: %w", name, node, err)
	}
	p := pods[name]
	srv := &OneServer{
		Network: net, ServiceIP: pickIP(created.Spec.ClusterIPs, created.Spec.ClusterIP, c.Params.IPFamily), Options: options,
		Pod: agentOf(p, net),
	}
	if net == api.NetworkAttachment && o.Network != nil {
		if err := attachAgent(&srv.Pod, p, o.Network.Name); err != nil {
			return nil, fmt.Errorf("all-to-one server pod %s on node %s: %w", name, node, err)
		}
		srv.policiesIn = policies(ctx, cs, o.Namespace, name, networkingv1.PolicyTypeIngress)
	}
	return srv, nil
}

// buildOneServer builds the all-to-one server pod (one container per driver server per client)
// and its ClusterIP Service.
func buildOneServer(o AgentOptions, net api.Network, node string, c plan.Case, d driver.Driver, options []map[string]string) (*corev1.Pod, *corev1.Service, error) {
	name := fmt.Sprintf("cnperf-mesh-one-%s-%s", net, kube.ShortID(o.RunID))
	labels := kube.RunLabels(o.RunID)
	labels[LabelComponent] = ComponentOne
	labels[kube.LabelNetwork] = string(net)
	labels[kube.LabelEndpoint] = name
	po := o.podOptions(net, []string{node})
	po.Name, po.Labels, po.RunOnce = name, labels, true
	co := o.containerOptions()
	var servers []driver.Server
	for i, opts := range options {
		ci := c
		ci.Params.Options = plan.MergeOptions(c.Params.Options, opts)
		for _, srv := range driver.Servers(d, []plan.Case{ci}) {
			cname := fmt.Sprintf("srv-%d-%s", i, dnsName(srv.Name))
			if len(cname) > 63 {
				cname = cname[:63]
			}
			po.Containers = append(po.Containers, co.ServerContainer(cname, srv, net == api.NetworkHost, true))
			servers = append(servers, srv)
		}
	}
	if len(po.Containers) == 0 {
		return nil, nil, fmt.Errorf("driver %s has no server for %s", d.Name(), c.Profile)
	}
	// An IPv6 run's Service is IPv6, whatever the cluster's first Service family, as the kube
	// platform's are: the clients dial it on the family the servers are started for.
	var families []string
	if f := c.Params.IPFamily; f != "" {
		families = []string{f}
	}
	svc := kube.ServiceOptions{Name: name, Namespace: o.Namespace, Labels: kube.RunLabels(o.RunID), Type: corev1.ServiceTypeClusterIP,
		Selector: map[string]string{kube.LabelEndpoint: name}, Ports: kube.ServicePorts(servers), Families: families}.Service()
	pod := po.Pod()
	pod.ObjectMeta = o.objectMeta(net, pod.ObjectMeta)
	return pod, svc, nil
}

// AllToOne is one all-to-one measurement set: every client agent against one server, by
// one way (direct or service), sequential or all at once.
type AllToOne struct {
	Server     *OneServer
	Clients    *AgentSet
	Via        string
	Concurrent bool
}

// RunAllToOne runs every client node against the server, for each set, and returns the mesh
// section (one single-column matrix per set) and the results its cells index.
func (o *Options) RunAllToOne(ctx context.Context, env Env, nodes []Node, server Node, sets []AllToOne) (*api.Mesh, []api.Result) {
	m := o.newMesh("all-to-one", nodes)
	m.PairsTotal, m.Pairs = len(nodes), len(nodes)
	var results []api.Result
	for _, s := range sets {
		s.Clients.readMTU(ctx, env)
		attachment := s.Clients.matrixAttachment(s.Server.policiesIn)
		var rounds [][]cellJob
		var broken []cellJob
		var brokenWhy []string
		i := 0
		for _, n := range nodes {
			a, ok := s.Clients.ByNode[n.Name]
			j := cellJob{net: s.Clients.Network, client: a, server: s.Server.Pod, via: s.Via, path: PathOf(s.Clients.Network, n, server),
				attachment: attachment}
			if sa, ok := s.Clients.ByNode[server.Name]; ok {
				j.serverNode = &sa
			}
			if s.Via == ViaService {
				j.path = api.PathPodClusterIP
				j.target = driver.Target{Host: s.Server.ServiceIP}
			} else {
				j.target = Target(s.Server.Pod, o.Params.IPFamily)
			}
			if !ok {
				j.client = Agent{Node: n.Name, Network: s.Clients.Network}
				broken = append(broken, j)
				brokenWhy = append(brokenWhy, fmt.Sprintf("no %s agent on node %s", o.networkName(s.Clients.Network), n.Name))
				continue
			}
			j.opts = s.Server.Options[i%len(s.Server.Options)]
			i++
			if s.Concurrent {
				if len(rounds) == 0 {
					rounds = append(rounds, nil)
				}
				rounds[0] = append(rounds[0], j)
			} else {
				j.round = len(rounds)
				rounds = append(rounds, []cellJob{j})
			}
		}
		mat := api.MeshMatrix{Network: o.networkName(s.Clients.Network), Attachment: attachment, Via: s.Via, Concurrent: s.Concurrent}
		done := 0
		res := o.runRounds(ctx, env, rounds, func(j cellJob, r *api.Result) {
			done++
			o.logCell(env, j, r, done, len(nodes), len(rounds))
		})
		results = o.fill(&mat, results, rounds, res, broken, brokenWhy)
		m.Matrices = append(m.Matrices, mat)
		if len(rounds) > m.Rounds {
			m.Rounds = len(rounds)
		}
	}
	return m, results
}
