package mesh

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/flame"
	"github.com/cnperf/cnperf/internal/platform"
)

// Kinds of CPU profile.
const (
	ProfilePerf  = "perf"
	ProfilePprof = "pprof"
)

// FlameProfiler records a CPU profile of every cell and draws its flame graph into Dir.
//
// With Perf (privileged agents in the host PID namespace) it runs the node's own perf
// (`chroot /host perf record -a -g`) on the client and the server node for the
// cell's measured time: kernel and user stacks of everything on the node. Otherwise it asks
// the cnperf agent client for its own Go CPU profile (`cnperf agent client --cpu-profile
// FILE`): user-space stacks of the client process only. Each api.CPUProfile says which.
type FlameProfiler struct {
	Dir  string
	Perf bool
	Exec func(Agent) platform.Executor
	// Window is how long perf records (the cell's samples × (duration + warm-up)).
	Window time.Duration
	// PprofUnsupported, when set, is why the agent cannot write a pprof profile: every
	// profile then carries it as its error.
	PprofUnsupported string
	Log              io.Writer

	mu  sync.Mutex
	seq int
}

func (p *FlameProfiler) next() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seq++
	return p.seq
}

// Start implements Profiler.
func (p *FlameProfiler) Start(ctx context.Context, cell CellInfo) (func(platform.Executor) platform.Executor, func(context.Context) []api.CPUProfile) {
	base := fmt.Sprintf("%s-%s-%s", cell.Network, cell.Client.Node, cell.Server.Node)
	if p.Perf {
		return nil, p.startPerf(ctx, cell, base)
	}
	if p.PprofUnsupported != "" {
		return nil, func(context.Context) []api.CPUProfile {
			return []api.CPUProfile{{Kind: ProfilePprof, Node: cell.Client.Node, Role: "client", Error: p.PprofUnsupported}}
		}
	}
	w := &pprofClient{p: p, id: p.next()}
	return w.wrap, func(ctx context.Context) []api.CPUProfile {
		return []api.CPUProfile{w.collect(ctx, cell, base)}
	}
}

// perfCommand runs the node's own perf, from the node's root filesystem that privileged
// agents mount at HostRoot (they also share the host PID namespace, so perf sees every
// process).
func perfCommand(args ...string) []string {
	return append([]string{"chroot", HostRoot, "perf"}, args...)
}

func (p *FlameProfiler) startPerf(ctx context.Context, cell CellInfo, base string) func(context.Context) []api.CPUProfile {
	type rec struct {
		node, role string
		agent      Agent
		file       string
		done       chan driver.Output
	}
	agents := []rec{{node: cell.Client.Node, role: "client", agent: cell.Client}}
	if cell.Server.Node != cell.Client.Node && cell.Server.Pod != "" {
		agents = append(agents, rec{node: cell.Server.Node, role: "server", agent: cell.Server})
	}
	secs := strconv.FormatFloat(p.Window.Seconds()+0.5, 'f', 1, 64)
	for i := range agents {
		r := &agents[i]
		// Unique across runs: perf renames an existing output file to FILE.old.
		r.file = fmt.Sprintf("/tmp/cnperf-perf-%d-%d.data", time.Now().UnixNano(), p.next())
		r.done = make(chan driver.Output, 1)
		argv := perfCommand("record", "-a", "-g", "-F", "99", "-q", "-o", r.file, "--", "sleep", secs)
		go func(ex platform.Executor) {
			r.done <- ex.Exec(ctx, driver.Command{Argv: argv, Timeout: p.Window + time.Minute})
		}(p.Exec(r.agent))
	}
	// Give perf a moment to attach before the measurement starts.
	time.Sleep(300 * time.Millisecond)
	return func(ctx context.Context) []api.CPUProfile {
		var out []api.CPUProfile
		for _, r := range agents {
			cp := api.CPUProfile{Kind: ProfilePerf, Node: r.node, Role: r.role}
			rec := <-r.done
			ex := p.Exec(r.agent)
			if rec.Err != nil || rec.ExitCode != 0 {
				cp.Error = fmt.Sprintf("perf record on node %s: %s", r.node, describe(rec))
			} else {
				script := ex.Exec(ctx, driver.Command{Argv: perfCommand("script", "-i", r.file), Timeout: 2 * time.Minute})
				if script.Err != nil || script.ExitCode != 0 {
					cp.Error = fmt.Sprintf("perf script on node %s: %s", r.node, describe(script))
				} else if stacks, err := flame.ParsePerfScript(bytes.NewReader(script.Stdout)); err != nil {
					cp.Error = err.Error()
				} else {
					p.render(&cp, base+"-"+r.role+"-"+r.node, stacks, "perf record -a -g on node "+r.node+" (kernel and user stacks of the whole node)", "samples")
				}
			}
			ex.Exec(ctx, driver.Command{Argv: []string{"rm", "-f", HostRoot + r.file, HostRoot + r.file + ".old"}, Timeout: 30 * time.Second})
			out = append(out, cp)
		}
		return out
	}
}

// pprofClient adds --cpu-profile to the agent client's argv and collects the files.
type pprofClient struct {
	p     *FlameProfiler
	id    int
	mu    sync.Mutex
	files []string
	ex    platform.Executor
}

func (w *pprofClient) wrap(ex platform.Executor) platform.Executor {
	w.ex = ex
	return execFunc(func(ctx context.Context, cmd driver.Command) driver.Output {
		if len(cmd.Argv) >= 3 && cmd.Argv[0] == "cnperf" && cmd.Argv[1] == "agent" && cmd.Argv[2] == "client" {
			w.mu.Lock()
			f := fmt.Sprintf("/tmp/cnperf-cpu-%d-%d.pprof", w.id, len(w.files))
			w.files = append(w.files, f)
			w.mu.Unlock()
			cmd.Argv = append(append([]string(nil), cmd.Argv...), "--cpu-profile", f)
		}
		return ex.Exec(ctx, cmd)
	})
}

func (w *pprofClient) collect(ctx context.Context, cell CellInfo, base string) api.CPUProfile {
	cp := api.CPUProfile{Kind: ProfilePprof, Node: cell.Client.Node, Role: "client"}
	w.mu.Lock()
	files := append([]string(nil), w.files...)
	w.mu.Unlock()
	if w.ex == nil || len(files) == 0 {
		cp.Error = "the driver ran no cnperf agent client (pprof profiles come from the native driver's client)"
		return cp
	}
	var stacks []flame.Stack
	var errs []string
	for _, f := range files {
		out := w.ex.Exec(ctx, driver.Command{Argv: []string{"cat", f}, Timeout: time.Minute})
		w.ex.Exec(ctx, driver.Command{Argv: []string{"rm", "-f", f}, Timeout: 30 * time.Second})
		if out.Err != nil || out.ExitCode != 0 {
			errs = append(errs, describe(out))
			continue
		}
		prof, err := flame.ParsePprof(bytes.NewReader(out.Stdout))
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		stacks = append(stacks, prof.Stacks...)
	}
	if len(stacks) == 0 {
		cp.Error = "no profile: " + strings.Join(errs, "; ")
		return cp
	}
	w.p.render(&cp, base+"-client-"+cell.Client.Node, stacks, "Go CPU profile of the cnperf agent client on node "+cell.Client.Node+" (user-space stacks of that process only)", "ns")
	return cp
}

type execFunc func(ctx context.Context, cmd driver.Command) driver.Output

func (f execFunc) Exec(ctx context.Context, cmd driver.Command) driver.Output { return f(ctx, cmd) }

// render writes NAME.svg and NAME.folded into Dir and fills cp.
func (p *FlameProfiler) render(cp *api.CPUProfile, name string, stacks []flame.Stack, subtitle, unit string) {
	root := flame.Build("all", stacks)
	if root.Value == 0 {
		cp.Error = "the profile holds no samples"
		return
	}
	if unit == "samples" {
		cp.Samples = root.Value
	} else {
		cp.Samples = int64(len(stacks))
	}
	name = strings.NewReplacer("/", "_", " ", "_").Replace(name)
	svgPath := filepath.Join(p.Dir, name+".svg")
	foldedPath := filepath.Join(p.Dir, name+".folded")
	var b bytes.Buffer
	if err := flame.WriteSVG(&b, root, flame.SVGOptions{Title: name, Subtitle: subtitle, Unit: unit}); err != nil {
		cp.Error = err.Error()
		return
	}
	if err := os.WriteFile(svgPath, b.Bytes(), 0o644); err != nil {
		cp.Error = fmt.Sprintf("write flame graph: %v", err)
		return
	}
	if err := os.WriteFile(foldedPath, []byte(flame.Folded(stacks)), 0o644); err != nil {
		cp.Error = fmt.Sprintf("write folded stacks: %v", err)
		return
	}
	cp.SVG, cp.Source = svgPath, foldedPath
	if p.Log != nil {
		fmt.Fprintf(p.Log, "mesh: %s flame graph %s (%d %s)\n", cp.Kind, svgPath, root.Value, unit)
	}
}

func describe(o driver.Output) string {
	msg := strings.TrimSpace(string(o.Stderr))
	if len(msg) > 300 {
		msg = "..." + msg[len(msg)-300:]
	}
	if o.Err != nil {
		return fmt.Sprintf("%v", o.Err)
	}
	return fmt.Sprintf("exit %d: %s", o.ExitCode, msg)
}

// AgentSupportsPprof asks an agent's cnperf whether its client can write a CPU profile;
// the returned string is why not ("" when it can).
func AgentSupportsPprof(ctx context.Context, ex platform.Executor) string {
	out := ex.Exec(ctx, driver.Command{Argv: []string{"cnperf", "agent", "client", "--help"}, Timeout: 30 * time.Second})
	if out.Err != nil {
		return fmt.Sprintf("cannot ask the agent: %v", out.Err)
	}
	if !bytes.Contains(out.Stdout, []byte("--cpu-profile")) && !bytes.Contains(out.Stderr, []byte("--cpu-profile")) {
		return "the agent image's cnperf has no `agent client --cpu-profile` (a newer image is needed); no pprof profile taken. With --privileged, perf on the nodes is used instead"
	}
	return ""
}
