package agentcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/agenttoken"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/iostreams"
	"github.com/cnperf/cnperf/internal/testport"
)

// syncBuffer is a bytes.Buffer safe for the server goroutine and the test to share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func execute(ctx context.Context, args []string) (string, string, error) {
	var out, errOut bytes.Buffer
	cmd := NewCommand(iostreams.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	cmd.SetArgs(args)
	cmd.SetOut(&errOut)
	cmd.SetErr(&errOut)
	cmd.SilenceUsage = true
	cmd.SilenceErrors = true
	err := cmd.ExecuteContext(ctx)
	return out.String(), errOut.String(), err
}

// testToken is the token of the tests' servers and clients (set in the environment).
const testToken = "0123456789abcdef0123456789abcdef"

// serve starts `agent serve` on a port the kernel chooses (--port 0) and returns the port its
// ready line names. A port picked free and released first (testport.Free) can be taken in
// between, under load, as the source port of another test's outgoing connection (the
// loopback CRR tests of other packages cycle through the ephemeral range in seconds), and the
// server's listen then fails: TestToken failed so.
func serve(t *testing.T, args ...string) (int, *syncBuffer) {
	t.Helper()
	t.Setenv(agenttoken.Env, testToken)
	ctx, cancel := context.WithCancel(context.Background())
	log := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		cmd := NewCommand(iostreams.Streams{In: strings.NewReader(""), Out: log, ErrOut: log})
		cmd.SetArgs(append([]string{"serve", "--bind", "127.0.0.1", "--port", "0"}, args...))
		done <- cmd.ExecuteContext(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	ready := regexp.MustCompile(regexp.QuoteMeta(ReadyLine) + ` on port (\d+) `)
	deadline := time.Now().Add(5 * time.Second)
	for {
		if m := ready.FindStringSubmatch(log.String()); m != nil {
			port, err := strconv.Atoi(m[1])
			if err != nil || port == 0 {
				t.Fatalf("ready line names port %q", m[1])
			}
			return port, log
		}
		if time.Now().After(deadline) {
			t.Fatalf("server not ready: %s", log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestClientJSON(t *testing.T) {
	port, _ := serve(t, "--data-port", strconv.Itoa(testport.Free(t)))
	out, stderr, err := execute(context.Background(), []string{"client", "--host", "127.0.0.1", "--port", strconv.Itoa(port),
		"--profile", "tcp_rr", "--duration", "200ms", "--burst", "2", "--json"})
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	var s api.Sample
	if err := dec.Decode(&s); err != nil {
		t.Fatalf("stdout is not one Sample: %v\n%s", err, out)
	}
	if dec.More() {
		t.Fatal("more than one JSON document on stdout")
	}
	if s.TransactionsPerSecond == nil || *s.TransactionsPerSecond <= 0 || s.Histogram == nil || s.Latency == nil || s.Error != "" {
		t.Fatalf("incomplete sample: %s", out)
	}
}

func TestClientHuman(t *testing.T) {
	port, _ := serve(t)
	out, stderr, err := execute(context.Background(), []string{"client", "--host", "127.0.0.1", "--port", strconv.Itoa(port),
		"--profile", "UDP_STREAM", "--duration", "200ms", "--rate", "10M"})
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	for _, want := range []string{"UDP_STREAM to 127.0.0.1", "throughput", "packets", "jitter", "cpu client", "cpu server"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestClientFailureJSON(t *testing.T) {
	t.Setenv(agenttoken.Env, testToken)
	out, _, err := execute(context.Background(), []string{"client", "--host", "127.0.0.1", "--port", strconv.Itoa(testport.Free(t)),
		"--duration", "1s", "--json", "--connect-timeout", "1s"})
	if err == nil || exit.Code(err) != exit.Failed {
		t.Fatalf("err = %v (code %d), want a failure", err, exit.Code(err))
	}
	var s api.Sample
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("failure output is not a Sample: %v\n%s", err, out)
	}
	if s.Error == "" || s.ThroughputBitsPerSecond != nil {
		t.Fatalf("failed sample must carry the error and no figures: %s", out)
	}
}

// The token comes from the environment or a file; a client with another token, or none, does
// not get a test.
func TestToken(t *testing.T) {
	port, log := serve(t)
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte(testToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	client := []string{"client", "--host", "127.0.0.1", "--port", strconv.Itoa(port), "--profile", "TCP_RR", "--duration", "100ms"}
	t.Setenv(agenttoken.Env, "")
	if _, _, err := execute(context.Background(), client); exit.Code(err) != exit.BadInput || !strings.Contains(err.Error(), agenttoken.Env) {
		t.Fatalf("no token: err = %v, want a usage error naming %s", err, agenttoken.Env)
	}
	if _, stderr, err := execute(context.Background(), append(client, "--token-file", file)); err != nil {
		t.Fatalf("token from a file: %v\n%s", err, stderr)
	}
	t.Setenv(agenttoken.Env, strings.Repeat("9", len(testToken)))
	_, _, err := execute(context.Background(), client)
	if err == nil || exit.Code(err) != exit.Failed || !strings.Contains(err.Error(), "token") {
		t.Fatalf("wrong token: err = %v, want a failure about the token", err)
	}
	if strings.Contains(log.String(), testToken) {
		t.Fatalf("the server's log shows the token:\n%s", log.String())
	}
	out, _, err := execute(context.Background(), []string{"token"})
	if err != nil || len(strings.TrimSpace(out)) != 64 {
		t.Fatalf("agent token: %q %v", out, err)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"client"},
		{"client", "--host", "x", "--profile", "TCP_FOO"},
		{"client", "--host", "x", "--rate", "fast"},
		{"client", "--host", "x", "--cpu", "a,b"},
		{"client", "--host", "x", "--crr-close", "slam"},
		{"client", "--host", "x", "--duration", "0s"},
		{"client", "--host", "x", "--parallel", "0"},
	} {
		_, _, err := execute(context.Background(), args)
		if exit.Code(err) != exit.BadInput {
			t.Errorf("%v: err = %v, want a usage error", args, err)
		}
	}
}

// The client's --rate is read by plan.ParseRate (tested there).
func TestParseCPU(t *testing.T) {
	for in, want := range map[string][2]int{"": {-1, -1}, "0,1": {0, 1}, "1": {1, -1}, ",1": {-1, 1}, "0,0": {0, 0}} {
		c, s, err := ParseCPU(in)
		if err != nil || c != want[0] || s != want[1] {
			t.Errorf("ParseCPU(%q) = %d,%d,%v; want %v", in, c, s, err, want)
		}
	}
	for _, bad := range []string{"x", "1,2,3", "-1", "0,99999"} {
		if _, _, err := ParseCPU(bad); err == nil {
			t.Errorf("ParseCPU(%q) accepted", bad)
		}
	}
}
