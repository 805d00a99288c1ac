//go:build e2e

// `cnperf mesh` on the e2e cluster: a node × node matrix for the pod network and for
// hostNetwork with both nodes' CPU in every cell, and all-to-one directly and through a
// Service, sequential and concurrent. It runs the command in-process (meshcmd.NewCommand);
// the agents run the cnperf that is in the agent image.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/cli/meshcmd"
	"github.com/cnperf/cnperf/internal/iostreams"
)

func meshCluster(t *testing.T) (kubeconfig string, nodes []string) {
	t.Helper()
	kc := os.Getenv("CNPERF_E2E_KUBECONFIG")
	if kc == "" {
		t.Skip("CNPERF_E2E_KUBECONFIG is not set: no e2e cluster given (run `make e2e`, or `make e2e-up` then `make e2e-test`)")
	}
	nodes = strings.Fields(os.Getenv("CNPERF_E2E_NODE_NAMES"))
	if n, _ := strconv.Atoi(os.Getenv("CNPERF_E2E_NODES")); n != len(nodes) || n < 2 {
		t.Fatalf("CNPERF_E2E_NODES=%q and CNPERF_E2E_NODE_NAMES=%q disagree", os.Getenv("CNPERF_E2E_NODES"), os.Getenv("CNPERF_E2E_NODE_NAMES"))
	}
	return kc, nodes
}

// runMesh runs `cnperf mesh ARGS -o json` and returns the run; stderr goes to the test log.
func runMesh(t *testing.T, kubeconfig string, args ...string) (*api.Run, error) {
	t.Helper()
	var out bytes.Buffer
	logw := &testLog{t: t}
	cmd := meshcmd.NewCommand(iostreams.Streams{In: strings.NewReader(""), Out: &out, ErrOut: logw})
	// A namespace of its own per run: the previous run's is still terminating for a while.
	meshRuns++
	ns := fmt.Sprintf("cnperf-e2e-mesh-%d-%d", os.Getpid()%10000, meshRuns)
	cmd.SetArgs(append([]string{"--kubeconfig", kubeconfig, "-o", "json", "--namespace", ns}, args...))
	cmd.SetOut(logw)
	cmd.SetErr(logw)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	err := cmd.ExecuteContext(ctx)
	if out.Len() == 0 {
		return nil, err
	}
	if d := os.Getenv("CNPERF_E2E_MESH_DUMP"); d != "" {
		_ = os.WriteFile(d, out.Bytes(), 0o644)
	}
	var run api.Run
	if jerr := json.Unmarshal(out.Bytes(), &run); jerr != nil {
		t.Fatalf("output is not a run: %v\n%s", jerr, out.String())
	}
	return &run, err
}

var meshRuns int

type testLog struct{ t *testing.T }

func (l *testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func TestMeshMatrixPodAndHost(t *testing.T) {
	kc, nodes := meshCluster(t)
	n := len(nodes)
	run, err := runMesh(t, kc, "--network", "pod,host", "--duration", "2s", "--profile", "TCP_STREAM")
	if err != nil {
		t.Fatalf("cnperf mesh: %v", err)
	}
	m := run.Mesh
	if m == nil || m.Mode != "mesh" || len(m.Nodes) != n || len(m.Matrices) != 2 {
		t.Fatalf("mesh section: %+v", m)
	}
	wantRounds := 2 * (n - 1)
	if n%2 == 1 {
		wantRounds = 2 * n
	}
	if m.Rounds != wantRounds || m.Pairs != n*(n-1) {
		t.Fatalf("%d rounds, %d pairs; want %d, %d", m.Rounds, m.Pairs, wantRounds, n*(n-1))
	}
	for _, mat := range m.Matrices {
		if len(mat.Cells) != n*(n-1) {
			t.Fatalf("%s matrix has %d cells, want %d", mat.Network, len(mat.Cells), n*(n-1))
		}
		seen := map[[2]string]bool{}
		for _, c := range mat.Cells {
			k := [2]string{c.Client, c.Server}
			if seen[k] || c.Client == c.Server {
				t.Fatalf("%s: cell %s→%s twice or on the diagonal", mat.Network, c.Client, c.Server)
			}
			seen[k] = true
			if c.Error != "" || c.Value == nil || !(*c.Value > 0) {
				t.Fatalf("%s %s→%s: value %v error %q", mat.Network, c.Client, c.Server, c.Value, c.Error)
			}
			r := run.Results[c.Result]
			if r.Placement == nil || r.Placement.Client.Node != c.Client || r.Placement.Server.Node != c.Server {
				t.Fatalf("%s %s→%s: result placement %+v", mat.Network, c.Client, c.Server, r.Placement)
			}
			if (mat.Network == "host") != r.Params.HostNetwork || (mat.Network == "host") != (r.Path == api.PathHostHost) {
				t.Fatalf("%s %s→%s: path %s hostNetwork %v", mat.Network, c.Client, c.Server, r.Path, r.Params.HostNetwork)
			}
			nr := r.NodeResources
			if nr == nil || nr.Client == nil || nr.Server == nil {
				t.Fatalf("%s %s→%s: no node resources: %+v", mat.Network, c.Client, c.Server, nr)
			}
			for _, x := range []*api.NodeResources{nr.Client, nr.Server} {
				if x.CPUs < 1 || !(x.CPUTotalPercent > 0) || x.CPUTotalPercent > 100 || x.WindowSeconds < 1.5 || x.MemoryTotalBytes <= 0 {
					t.Fatalf("%s %s→%s: node resources %+v", mat.Network, c.Client, c.Server, *x)
				}
			}
			if nr.Client.Node != c.Client || nr.Server.Node != c.Server {
				t.Fatalf("%s %s→%s: node resources of %s and %s", mat.Network, c.Client, c.Server, nr.Client.Node, nr.Server.Node)
			}
		}
		// No node took part in two measurements of one round at once.
		busy := map[[2]int]string{}
		for _, c := range mat.Cells {
			for _, node := range []string{c.Client, c.Server} {
				k := [2]int{c.Round, indexOf(nodes, node)}
				if prev, ok := busy[k]; ok {
					t.Fatalf("%s round %d: node %s in %s and %s→%s", mat.Network, c.Round, node, prev, c.Client, c.Server)
				}
				busy[k] = c.Client + "→" + c.Server
			}
		}
		if mat.Median != nil {
			t.Logf("%s network: median %.3g bits/s over %d cells", mat.Network, *mat.Median, len(mat.Cells))
		}
	}
}

func TestMeshAllToOne(t *testing.T) {
	kc, nodes := meshCluster(t)
	target := nodes[0]
	for _, concurrent := range []bool{false, true} {
		args := []string{"--all-to-one", target, "--via", "direct,service", "--duration", "1s"}
		if concurrent {
			args = append(args, "--concurrent")
		}
		run, err := runMesh(t, kc, args...)
		if err != nil {
			t.Fatalf("cnperf mesh %v: %v", args, err)
		}
		m := run.Mesh
		if m == nil || m.Mode != "all-to-one" || len(m.Matrices) != 2 {
			t.Fatalf("mesh section: %+v", m)
		}
		for _, mat := range m.Matrices {
			if len(mat.Cells) != len(nodes) || mat.Concurrent != concurrent {
				t.Fatalf("%s/%s: %d cells concurrent=%v", mat.Network, mat.Via, len(mat.Cells), mat.Concurrent)
			}
			rounds := map[int]bool{}
			for _, c := range mat.Cells {
				if c.Server != target || c.Error != "" || c.Value == nil {
					t.Fatalf("%s/%s %s→%s: %v %q", mat.Network, mat.Via, c.Client, c.Server, c.Value, c.Error)
				}
				r := run.Results[c.Result]
				if mat.Via == "service" && r.Path != api.PathPodClusterIP {
					t.Fatalf("via service: path %s", r.Path)
				}
				if r.NodeResources == nil || r.NodeResources.Server == nil || r.NodeResources.Server.Node != target {
					t.Fatalf("%s→%s: server node resources %+v", c.Client, c.Server, r.NodeResources)
				}
				rounds[c.Round] = true
			}
			if concurrent && len(rounds) != 1 || !concurrent && len(rounds) != len(nodes) {
				t.Fatalf("concurrent=%v: cells in %d rounds", concurrent, len(rounds))
			}
		}
	}
}

func indexOf(xs []string, x string) int {
	for i, y := range xs {
		if y == x {
			return i
		}
	}
	return -1
}

func TestMeshCPUProfile(t *testing.T) {
	kc, nodes := meshCluster(t)
	dir := t.TempDir()
	// Without privileges: the agent's own pprof profile, or a clear error per cell when the
	// agent image's cnperf cannot write one; the measurement itself must not suffer.
	run, err := runMesh(t, kc, "--nodes", nodes[0]+","+nodes[1], "--duration", "1s", "--cpu-profile", dir)
	if err != nil {
		t.Fatalf("cnperf mesh: %v", err)
	}
	for _, r := range run.Results {
		if len(r.Profiles) != 1 || r.Profiles[0].Kind != "pprof" {
			t.Fatalf("profiles %+v, want one pprof profile (or its error)", r.Profiles)
		}
		p := r.Profiles[0]
		if p.Error == "" {
			if _, err := os.Stat(p.SVG); err != nil || p.Samples == 0 {
				t.Fatalf("pprof flame graph %s: %v (%d samples)", p.SVG, err, p.Samples)
			}
		} else {
			t.Logf("pprof: %s", p.Error)
		}
	}
	// Privileged agents: perf on both nodes (the e2e nodes share this machine's kernel and
	// its perf). Skipped where the nodes have no perf.
	if _, err := exec.LookPath("perf"); err != nil {
		t.Skip("no perf on this machine (the e2e nodes' host)")
	}
	run, err = runMesh(t, kc, "--nodes", nodes[0]+","+nodes[1], "--duration", "1s", "--cpu-profile", dir, "--privileged")
	if err != nil {
		t.Fatalf("cnperf mesh --privileged: %v", err)
	}
	for _, r := range run.Results {
		if len(r.Profiles) != 2 {
			t.Fatalf("profiles %+v, want client and server", r.Profiles)
		}
		for _, p := range r.Profiles {
			if p.Kind != "perf" || p.Error != "" || p.Samples == 0 {
				t.Fatalf("perf profile %+v", p)
			}
			svg, err := os.ReadFile(p.SVG)
			if err != nil || !bytes.Contains(svg, []byte(" [k]")) {
				t.Fatalf("flame graph %s: %v, kernel frames: %v", p.SVG, err, bytes.Contains(svg, []byte(" [k]")))
			}
			t.Logf("%s %s on %s: %d samples, %s", p.Kind, p.Role, p.Node, p.Samples, p.SVG)
		}
	}
}
