package procexec

import (
	"context"
	"strings"
	"testing"
	"time"
)

// Real processes (sh, sleep): what the platforms' executors depend on.
func TestRun(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tt := range []struct {
		name     string
		ctx      context.Context
		argv     []string
		o        Options
		exit     int
		stdout   string
		err      string
		truncOut bool
	}{
		{name: "exit status", argv: []string{"sh", "-c", "echo out; echo err >&2; exit 3"}, exit: 3, stdout: "out\n"},
		{name: "env", argv: []string{"sh", "-c", "echo $PROCEXEC_TEST"}, o: Options{Env: []string{"PROCEXEC_TEST=x"}}, stdout: "x\n"},
		{name: "timeout kills the group", argv: []string{"sh", "-c", "sleep 30 & wait"}, o: Options{Timeout: 200 * time.Millisecond},
			exit: -1, err: "sh did not finish within 200ms and was killed"},
		{name: "ctx ended", ctx: cancelled, argv: []string{"sleep", "30"}, exit: -1, err: "sleep was stopped: context canceled"},
		{name: "truncated", argv: []string{"sh", "-c", "echo 0123456789"}, o: Options{MaxOutput: 4}, stdout: "0123", truncOut: true},
		{name: "not found", argv: []string{"/nonexistent/tool"}, exit: -1, err: "start /nonexistent/tool"},
		{name: "empty", argv: nil, exit: -1, err: "empty command"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := tt.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			if tt.o.MaxOutput == 0 {
				tt.o.MaxOutput = 1 << 20
			}
			out, trunc := Run(ctx, tt.argv, tt.o)
			if out.ExitCode != tt.exit {
				t.Errorf("exit code %d, want %d", out.ExitCode, tt.exit)
			}
			if tt.stdout != "" && string(out.Stdout) != tt.stdout {
				t.Errorf("stdout %q, want %q", out.Stdout, tt.stdout)
			}
			if (tt.err == "") != (out.Err == nil) || (out.Err != nil && !strings.Contains(out.Err.Error(), tt.err)) {
				t.Errorf("err %v, want %q", out.Err, tt.err)
			}
			if trunc.Stdout != tt.truncOut {
				t.Errorf("truncated %+v, want stdout %v", trunc, tt.truncOut)
			}
			if out.EndTime.Before(out.StartTime) {
				t.Errorf("end %v before start %v", out.EndTime, out.StartTime)
			}
		})
	}
}

// TestChildHasNoCredentials runs env through Run and Command: cnperf's credential variables
// (issue 28 finding 11: they reached every child) are not in a child's environment, the rest
// of cnperf's environment is, and what a caller adds on purpose is.
func TestChildHasNoCredentials(t *testing.T) {
	for _, name := range CredentialEnv {
		t.Setenv(name, "secret-"+name)
	}
	t.Setenv("PROCEXEC_KEPT", "kept")
	out, _ := Run(context.Background(), []string{"env"}, Options{Env: []string{"CNPERF_AGENT_TOKEN=given"}, MaxOutput: 1 << 20})
	if out.Err != nil || out.ExitCode != 0 {
		t.Fatalf("env: %v (exit %d)", out.Err, out.ExitCode)
	}
	bg := Command([]string{"env"}, nil)
	bgOut, err := bg.Output()
	if err != nil {
		t.Fatal(err)
	}
	for what, env := range map[string]string{"Run": "\n" + string(out.Stdout), "Command": "\n" + string(bgOut)} {
		if strings.Contains(env, "secret-") {
			t.Errorf("%s: a credential reached the child:\n%s", what, env)
		}
		if !strings.Contains(env, "\nPROCEXEC_KEPT=kept\n") {
			t.Errorf("%s: the rest of the environment did not reach the child", what)
		}
	}
	if !strings.Contains("\n"+string(out.Stdout), "\nCNPERF_AGENT_TOKEN=given\n") {
		t.Errorf("Run: the variable added on purpose did not reach the child")
	}
}
