package app_test

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/agenttoken"
	"github.com/cnperf/cnperf/internal/loadgen"
	"github.com/cnperf/cnperf/internal/procexec"
	"github.com/cnperf/cnperf/internal/sink/opensearch"
	"github.com/cnperf/cnperf/internal/sink/prometheus"
	"github.com/cnperf/cnperf/internal/text"
)

// agentProc is a running `cnperf agent serve` child of this test.
type agentProc struct {
	pid   int
	argv  []string
	token string
	env   []string
}

// findAgent looks for a child of this process running `agent serve`.
func findAgent() (*agentProc, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	me := strconv.Itoa(os.Getpid())
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(f) < 2 || f[1] != me {
			continue
		}
		cl, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		argv := strings.Split(strings.TrimRight(string(cl), "\x00"), "\x00")
		if !strings.Contains(strings.Join(argv, " "), "agent serve") {
			continue
		}
		env, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		a := &agentProc{pid: pid, argv: argv}
		a.env = strings.Split(string(env), "\x00")
		for _, kv := range a.env {
			if v, ok := strings.CutPrefix(kv, agenttoken.Env+"="); ok {
				a.token = v
			}
		}
		return a, nil
	}
	return nil, nil
}

// A local run's agent listens on loopback only, takes its token from the environment (not
// its command line), refuses a client without it, and the token shows nowhere in the output.
// The sinks' credentials in cnperf's environment do not reach it (issue 28 finding 11).
func TestLocalAgentGuarded(t *testing.T) {
	t.Setenv(agenttoken.Env, "")
	credentials := []string{opensearch.EnvUsername, opensearch.EnvPassword, prometheus.EnvToken}
	for _, name := range credentials {
		t.Setenv(name, "secret-"+name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	done := make(chan result, 1)
	go func() {
		done <- run(t, ctx, "run", "--platform", "local", "-o", "json", "--no-progress", "--driver", "native",
			"--profile", "TCP_RR", "--duration", "3s", "--samples", "1")
	}()
	var a *agentProc
	for a == nil {
		select {
		case r := <-done:
			t.Fatalf("run ended before its agent was seen: %v\n%s", r.err, r.stderr)
		case <-time.After(50 * time.Millisecond):
		}
		var err error
		if a, err = findAgent(); err != nil {
			t.Fatal(err)
		}
	}
	cmdline := strings.Join(a.argv, " ")
	if len(a.token) < loadgen.MinTokenBytes {
		t.Fatalf("agent %d (%s) has no token in its environment", a.pid, cmdline)
	}
	for _, kv := range a.env {
		if strings.Contains(kv, "secret-") {
			t.Errorf("a credential of cnperf's environment reached the agent: %s", kv)
		}
	}
	if strings.Contains(cmdline, a.token) {
		t.Fatalf("the token is on the agent's command line: %s", cmdline)
	}
	if !strings.Contains(cmdline, "--bind 127.0.0.1") {
		t.Fatalf("the local agent does not bind to loopback: %s", cmdline)
	}
	port := loadgen.DefaultPort
	for i, arg := range a.argv {
		if arg == "--port" && i+1 < len(a.argv) {
			port, _ = strconv.Atoi(a.argv[i+1])
		}
	}
	// the process is seen before it listens: wait until it accepts on loopback
	for deadline := time.Now().Add(20 * time.Second); ; {
		c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent never accepted on 127.0.0.1:%d: %v", port, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// another address of this host does not reach it
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, ad := range addrs {
			ip, ok := ad.(*net.IPNet)
			if !ok || ip.IP.IsLoopback() || ip.IP.To4() == nil {
				continue
			}
			c, err := net.DialTimeout("tcp", net.JoinHostPort(ip.IP.String(), strconv.Itoa(port)), time.Second)
			if err == nil {
				c.Close()
				t.Fatalf("the agent answers on %s", ip.IP)
			}
		}
	}
	// a client with another token gets no test
	_, err := loadgen.Run(ctx, loadgen.ClientConfig{Host: "127.0.0.1", Port: port, Profile: "TCP_RR", Duration: 100 * time.Millisecond,
		ClientCPU: -1, ServerCPU: -1, Token: strings.Repeat("0", 64)})
	if err == nil || !strings.Contains(err.Error(), "token") {
		t.Fatalf("a client without the run's token: err = %v", err)
	}
	r := <-done
	if r.err != nil {
		t.Fatalf("run: %v\n%s", r.err, r.stderr)
	}
	got := decodeRun(t, r.stdout)
	if len(got.Results) != 1 || got.Results[0].Failed() {
		t.Fatalf("the run's own test failed: %+v", got.Results)
	}
	if text.ContainsFolded(r.stdout+r.stderr, a.token) {
		t.Fatal("the token shows in the run's output")
	}
	t.Logf("agent pid %d: %s (token in its environment only)", a.pid, cmdline)
}

// TestCredentialEnvComplete: every variable cnperf takes a credential from is one that no
// child process inherits (procexec.CredentialEnv).
func TestCredentialEnvComplete(t *testing.T) {
	for _, name := range []string{opensearch.EnvUsername, opensearch.EnvPassword, prometheus.EnvToken, agenttoken.Env} {
		if !slices.Contains(procexec.CredentialEnv, name) {
			t.Errorf("procexec.CredentialEnv lacks %s", name)
		}
	}
}
