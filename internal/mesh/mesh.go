package mesh

import (
	"context"
	"fmt"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/meshview"
)

// Target is the address a client dials to reach agent a directly, of the run's IP family
// (Params.IPFamily: "ipv6" when every node puts IPv6 first, DefaultFamily; "" the first
// address), as the kube platform picks a case's (kube.PickIP of the pod's status addresses):
// its node's on the host network (a dual-stack node may list its IPv4 address first when its
// pods are IPv6 first), its pod's on the pod network, its address on the secondary network.
func Target(a Agent, family string) driver.Target {
	switch a.Network {
	case api.NetworkHost:
		return driver.Target{Host: pickIP(a.HostIPs, a.HostIP, family)}
	case api.NetworkAttachment:
		return driver.Target{Host: a.AttachIP}
	}
	return driver.Target{Host: pickIP(a.PodIPs, a.PodIP, family)}
}

// pickIP is the first of ips (else first alone) of the family (kube.PickIP).
func pickIP(ips []string, first, family string) string {
	if len(ips) == 0 && first != "" {
		ips = []string{first}
	}
	return kube.PickIP(ips, family)
}

// PathOf is the path between two nodes on a network, read from the path table: the direct
// path with the nodes' relation (same node, another zone when both zones are known, else
// another node), or the network's cross-node path when it has no row for that relation (the
// host network has one path, host-host). On a secondary network it is the path whose row a
// case's network puts on it (api.PathRow.Effective: the pod-to-pod paths).
func PathOf(net api.Network, client, server Node) api.Path {
	nodes := api.NodesCross
	switch {
	case client.Name == server.Name:
		nodes = api.NodesSame
	case client.Zone != "" && server.Zone != "" && client.Zone != server.Zone:
		nodes = api.NodesCrossZone
	}
	var params api.Params
	if net == api.NetworkAttachment {
		params.Network = "any/secondary-network" // which one does not change the row
	}
	find := func(nodes api.Nodes) (api.Path, bool) {
		for _, p := range api.Paths {
			row, _ := p.Row()
			if r := row.Effective(params); r.ClientNetwork == net && r.ServerNetwork == net && r.Nodes == nodes && r.Access == api.AccessDirect {
				return p, true
			}
		}
		return "", false
	}
	if p, ok := find(nodes); ok {
		return p
	}
	p, _ := find(api.NodesCross)
	return p
}

// networkName is how a matrix, a result's group and the log name a network: "pod", "host", or
// the secondary network's NAMESPACE/NAME.
func (o *Options) networkName(net api.Network) string {
	if net == api.NetworkAttachment && o.Attachment != "" {
		return o.Attachment
	}
	return string(net)
}

// newMesh is the mesh section shared by both modes.
func (o *Options) newMesh(mode string, nodes []Node) *api.Mesh {
	return &api.Mesh{
		Mode: mode, Nodes: Names(nodes), Profile: o.Profile, Driver: o.Driver.Name(),
		Metric: o.Metric.Field, Unit: o.Metric.Unit, HigherIsBetter: o.Metric.HigherIsBetter,
		OutlierMADs: o.OutlierMADs,
	}
}

// RunMesh measures the scheduled pairs of nodes on every agent set (one per network), round
// by round. It returns the mesh section and the results its cells index; a pair whose agent
// did not start is a failed cell with that cause.
func (o *Options) RunMesh(ctx context.Context, env Env, nodes []Node, sched *Schedule, sets []*AgentSet) (*api.Mesh, []api.Result) {
	m := o.newMesh("mesh", nodes)
	m.PairsTotal, m.Pairs, m.Sampled, m.Rounds = sched.PairsTotal, sched.Pairs, sched.Sampled, len(sched.Rounds)
	if sched.Sampled {
		seed := sched.Seed
		m.Seed = &seed
	}
	var results []api.Result
	for _, set := range sets {
		set.readMTU(ctx, env)
		failed := map[string]string{}
		for _, f := range set.Failed {
			failed[f.Node] = f.Reason
		}
		agent := func(n Node) (Agent, string) {
			if a, ok := set.ByNode[n.Name]; ok {
				return a, ""
			}
			if why, ok := failed[n.Name]; ok {
				return Agent{Node: n.Name, Network: set.Network}, fmt.Sprintf("no %s agent on node %s: %s", o.networkName(set.Network), n.Name, why)
			}
			return Agent{Node: n.Name, Network: set.Network}, fmt.Sprintf("no %s agent on node %s", o.networkName(set.Network), n.Name)
		}
		var rounds [][]cellJob
		var broken []cellJob
		var brokenWhy []string
		for ri, round := range sched.Rounds {
			var jobs []cellJob
			for _, p := range round {
				cn, sn := nodes[p.Client], nodes[p.Server]
				ca, cwhy := agent(cn)
				sa, swhy := agent(sn)
				j := cellJob{net: set.Network, client: ca, server: sa, round: ri, path: PathOf(set.Network, cn, sn),
					attachment: set.matrixAttachment(set.policiesIn)}
				if cn.Name == sn.Name {
					// One agent per node: the diagonal measures an agent against itself, inside
					// its own network namespace (the stack without veth, bridge or wire).
					j.path = api.PathLoopback
				}
				if cwhy == "" && swhy == "" {
					if j.target = Target(sa, o.Params.IPFamily); j.target.Host == "" {
						swhy = fmt.Sprintf("the %s agent on node %s has no %s address", o.networkName(set.Network), sn.Name, kube.FamilyName(o.Params.IPFamily))
					}
				}
				if cwhy != "" || swhy != "" {
					broken = append(broken, j)
					brokenWhy = append(brokenWhy, firstNonEmpty(cwhy, swhy))
					continue
				}
				jobs = append(jobs, j)
			}
			rounds = append(rounds, jobs)
		}
		mat := api.MeshMatrix{Network: o.networkName(set.Network), Attachment: set.matrixAttachment(set.policiesIn)}
		total := sched.Pairs
		done := 0
		res := o.runRounds(ctx, env, rounds, func(j cellJob, r *api.Result) {
			done++
			o.logCell(env, j, r, done, total, len(sched.Rounds))
		})
		results = o.fill(&mat, results, rounds, res, broken, brokenWhy)
		m.Matrices = append(m.Matrices, mat)
	}
	return m, results
}

// fill appends a matrix's results to results (the measured cells round by round, then the
// cells that could not run, with why) and its cells, indexing them, to mat, and finishes it
// (medians, outliers).
func (o *Options) fill(mat *api.MeshMatrix, results []api.Result, rounds [][]cellJob, res [][]api.Result, broken []cellJob, brokenWhy []string) []api.Result {
	for ri, round := range rounds {
		for i, j := range round {
			results = append(results, res[ri][i])
			mat.Cells = append(mat.Cells, o.cellFromResult(j, &results[len(results)-1], len(results)-1))
		}
	}
	for i, j := range broken {
		results = append(results, o.skipped(j, brokenWhy[i]))
		mat.Cells = append(mat.Cells, o.cellFromResult(j, &results[len(results)-1], len(results)-1))
	}
	Finish(mat, o.OutlierMADs, o.Metric.HigherIsBetter)
	return results
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

func (o *Options) logCell(env Env, j cellJob, r *api.Result, done, total, rounds int) {
	if env.Log == nil {
		return
	}
	what := ""
	if r.Error != "" {
		what = "FAILED: " + r.Error
	} else if v := o.Metric.Value(&r.Summary); v != nil {
		what = meshview.FormatValue(o.Metric, *v) + " " + o.Metric.Display
	} else {
		what = "no " + o.Metric.Field
	}
	cpu := ""
	if nr := r.NodeResources; nr != nil && nr.Client != nil && nr.Server != nil {
		cpu = fmt.Sprintf(" (node CPU client %.0f%%, server %.0f%%)", nr.Client.CPUTotalPercent, nr.Server.CPUTotalPercent)
	}
	via := ""
	if j.via != "" {
		via = " via " + j.via
	}
	fmt.Fprintf(env.Log, "mesh: %s%s round %d/%d [%d/%d] %s → %s: %s%s\n", o.networkName(j.net), via, j.round+1, rounds, done, total,
		j.client.Node, j.server.Node, what, cpu)
}
