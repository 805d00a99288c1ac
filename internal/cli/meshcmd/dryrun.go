package meshcmd

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/cli/flags"
	"github.com/cnperf/cnperf/internal/mesh"
)

// DryRunPair is one measurement `cnperf mesh --dry-run -o json` lists: a client node, a
// server node, the network, and the round it runs in (pairs of one round run at once).
type DryRunPair struct {
	Round   int    `json:"round"`
	Client  string `json:"client"`
	Server  string `json:"server"`
	Network string `json:"network"`
	Via     string `json:"via,omitempty"`
}

// dryRunPairs lists what the run would measure: the schedule's rounds for each network (the
// mesh), or every node's client against the server node (all-to-one; one at a time unless
// --concurrent, which puts them all in round 0).
func dryRunPairs(nodes []mesh.Node, sched *mesh.Schedule, server *mesh.Node, s *settings, concurrent bool) []DryRunPair {
	var out []DryRunPair
	for _, nw := range s.networks {
		if server == nil {
			for r, round := range sched.Rounds {
				for _, p := range round {
					out = append(out, DryRunPair{Round: r, Client: nodes[p.Client].Name, Server: nodes[p.Server].Name, Network: s.networkName(nw)})
				}
			}
			continue
		}
		r := 0
		for _, via := range s.vias {
			for _, n := range nodes {
				out = append(out, DryRunPair{Round: r, Client: n.Name, Server: server.Name, Network: s.networkName(nw), Via: via})
				if !concurrent {
					r++
				}
			}
			if concurrent {
				r++
			}
		}
	}
	return out
}

// printDryRun prints the pairs as a table (one line per pair) or a JSON array.
func printDryRun(w io.Writer, format string, nodes []mesh.Node, sched *mesh.Schedule, server *mesh.Node, s *settings, concurrent bool) error {
	pairs := dryRunPairs(nodes, sched, server, s, concurrent)
	if format == "json" || format == "yaml" {
		if pairs == nil {
			pairs = []DryRunPair{}
		}
		return flags.EncodeData(w, format, pairs)
	}
	fmt.Fprintf(w, "nodes: %s\n", strings.Join(mesh.Names(nodes), ", "))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ROUND\tCLIENT\tSERVER\tNETWORK\tVIA")
	for _, p := range pairs {
		via := p.Via
		if via == "" {
			via = "-"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", p.Round+1, p.Client, p.Server, p.Network, via)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	rounds := 0
	for _, p := range pairs {
		rounds = max(rounds, p.Round+1)
	}
	fmt.Fprintf(w, "%d measurements in %d rounds, %s with %s, %s\n", len(pairs), rounds, s.profile, s.drv.Name(), samplesText(s.params))
	return nil
}

// samplesText says how many samples each pair takes: "3 samples of 10s each", or with a
// confidence target the range and the target, "3-30 samples of 10s each until ±5% at 95%".
func samplesText(p api.Params) string {
	if t := p.Confidence; t != nil {
		return fmt.Sprintf("%d-%d samples of %s each until ±%g%% at %g%%", p.Samples, p.MaxSamples, secs(p.DurationSeconds),
			t.HalfWidthPercent, t.Level)
	}
	return fmt.Sprintf("%d samples of %s each", p.Samples, secs(p.DurationSeconds))
}

func secs(f float64) string { return fmt.Sprintf("%gs", f) }
