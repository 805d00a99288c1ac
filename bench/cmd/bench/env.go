package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// path is where a scenario runs: client and server namespaces and the address the client dials.
type path struct {
	name     string
	clientNS string
	serverNS string
	host     string
}

const (
	nsLoop   = "cnpb-lo"
	nsClient = "cnpb-a"
	nsServer = "cnpb-b"
	vethA    = "cnpb-va"
	vethB    = "cnpb-vb"
	addrA    = "198.18.0.1"
	addrB    = "198.18.0.2"
)

func sh(ctx context.Context, argv ...string) error {
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// setupPaths creates the namespaces; the returned cleanup removes them (and the veth pair with
// them) and must run even after a failure.
func setupPaths(ctx context.Context, names []string) ([]path, func(), error) {
	var created []string
	cleanup := func() {
		for i := len(created) - 1; i >= 0; i-- {
			_ = sh(context.Background(), "ip", "netns", "del", created[i])
		}
	}
	add := func(ns string) error {
		_ = sh(ctx, "ip", "netns", "del", ns) // a leftover from an interrupted run
		if err := sh(ctx, "ip", "netns", "add", ns); err != nil {
			return err
		}
		created = append(created, ns)
		if err := sh(ctx, "ip", "-n", ns, "link", "set", "lo", "up"); err != nil {
			return err
		}
		for _, kv := range nsSysctls {
			if err := sh(ctx, "ip", "netns", "exec", ns, "sysctl", "-qw", kv); err != nil {
				return err
			}
		}
		return nil
	}
	var out []path
	for _, n := range names {
		switch strings.TrimSpace(n) {
		case "loopback":
			if err := add(nsLoop); err != nil {
				return nil, cleanup, err
			}
			out = append(out, path{name: "loopback", clientNS: nsLoop, serverNS: nsLoop, host: "127.0.0.1"})
		case "veth":
			for _, ns := range []string{nsClient, nsServer} {
				if err := add(ns); err != nil {
					return nil, cleanup, err
				}
			}
			steps := [][]string{
				{"ip", "link", "add", vethA, "netns", nsClient, "type", "veth", "peer", "name", vethB, "netns", nsServer},
				{"ip", "-n", nsClient, "addr", "add", addrA + "/30", "dev", vethA},
				{"ip", "-n", nsServer, "addr", "add", addrB + "/30", "dev", vethB},
				{"ip", "-n", nsClient, "link", "set", vethA, "up"},
				{"ip", "-n", nsServer, "link", "set", vethB, "up"},
				// a TCP_CRR client that closes first keeps TIME_WAIT: let it reuse ports
				// outside loopback too (same setting for cnperf and the C loop)
				{"ip", "netns", "exec", nsClient, "sysctl", "-qw", "net.ipv4.tcp_tw_reuse=1"},
			}
			for _, s := range steps {
				if err := sh(ctx, s...); err != nil {
					return nil, cleanup, err
				}
			}
			out = append(out, path{name: "veth", clientNS: nsClient, serverNS: nsServer, host: addrB})
		case "":
		default:
			return nil, cleanup, fmt.Errorf("unknown path %q (want loopback or veth)", n)
		}
	}
	return out, cleanup, nil
}

// nsSysctls are set in every namespace the benchmark creates. Every TCP_CRR run leaves tens of
// thousands of TIME_WAIT sockets that would slow down the connects of the runs after it (the
// kernel searches longer for a free port) and so favour whichever tool runs first: the bucket
// limit makes the kernel drop TIME_WAIT sockets beyond 4096 (the close on the wire is still a
// graceful FIN exchange). The servers' fixed ports are kept out of the ephemeral range.
var nsSysctls = []string{
	"net.ipv4.ip_local_port_range=1024 65000",
	"net.ipv4.ip_local_reserved_ports=11111-11114,15001,15201-15202,17100-17210,19765",
	"net.ipv4.tcp_max_tw_buckets=4096",
}

// inNS prefixes argv to run in a namespace, optionally pinned to CPUs with taskset.
func inNS(ns, cpus string, argv ...string) []string {
	var out []string
	if ns != "" {
		out = append(out, "ip", "netns", "exec", ns)
	}
	if cpus != "" {
		out = append(out, "taskset", "-c", cpus)
	}
	return append(out, argv...)
}

// server is a long-running server process.
type server struct {
	cmd  *exec.Cmd
	name string
	log  *bytes.Buffer
}

func startServer(ctx context.Context, name string, argv []string, ready func(string) bool) (*server, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	var buf bytes.Buffer
	cmd.Stdout = &buf
	cmd.Stderr = &buf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	s := &server{cmd: cmd, name: name, log: &buf}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if ready(buf.String()) {
			return s, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			s.stop()
			return nil, fmt.Errorf("%s not ready: %s", name, strings.TrimSpace(buf.String()))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop ends the server's process group (it was started in its own, so this only reaches the
// processes this program started).
func (s *server) stop() {
	if s == nil || s.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

// cpuSeconds is the server process's user+system time including waited-for children, in
// seconds (the whole-run fallback when no steady-state window could be sampled).
func (s *server) cpuSeconds() float64 {
	f := procStatFields(s.cmd.Process.Pid)
	// f[0] is field 3 (state); utime, stime, cutime, cstime are fields 14..17
	var sum float64
	for _, k := range []int{11, 12, 13, 14} {
		if k < len(f) {
			v, _ := strconv.ParseFloat(f[k], 64)
			sum += v
		}
	}
	return sum / clockTicks
}

const clockTicks = 100 // sysconf(_SC_CLK_TCK) on Linux

// clientRun is one client execution.
type clientRun struct {
	stdout, stderr string
	wall           time.Duration
	cpuSec         float64     // the client's user+system time over the whole run
	samples        []cpuSample // client and server process-tree CPU, every cpuSampleEvery
	end            time.Time   // when the client exited
}

// runClient runs one client to its end, sampling its and the server's CPU (serverPID 0: no
// server) while it runs.
func runClient(ctx context.Context, argv []string, timeout time.Duration, serverPID int) (clientRun, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	t0 := time.Now()
	err := cmd.Start()
	var samples []cpuSample
	end := t0
	if err == nil {
		sampler := startCPUSampler(cmd.Process.Pid, serverPID, cpuSampleEvery)
		err = cmd.Wait()
		end = time.Now() // the exit, not the end of a sample still being read
		samples = sampler.Stop()
	}
	r := clientRun{stdout: out.String(), stderr: errb.String(), wall: end.Sub(t0), samples: samples, end: end}
	if cmd.ProcessState != nil {
		r.cpuSec = (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	}
	if err != nil {
		return r, fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, tail(errb.String()+out.String()))
	}
	return r, nil
}

func tail(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 400 {
		s = "…" + s[len(s)-400:]
	}
	return s
}
