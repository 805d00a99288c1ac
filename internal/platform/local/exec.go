package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/procexec"
)

// MaxOutputBytes bounds what one command may print; the rest is dropped and the output is
// marked truncated so a runaway tool cannot exhaust memory.
const MaxOutputBytes = 32 << 20

// SelfExecEnv is set in the environment of child processes started as "cnperf ...", so that
// a test binary standing in for cnperf (see internal/selfexec) knows to behave as the CLI.
const SelfExecEnv = "CNPERF_SELF_EXEC"

// Resolver maps a driver argv to the argv to execute (argv[0] "cnperf" → this binary).
type Resolver struct {
	// AgentBinary is the cnperf binary used for "cnperf" commands; empty means this process's
	// own executable.
	AgentBinary string
	// Env is added to the environment of "cnperf" commands (the run's agent token: never on
	// a command line, which every local user can read).
	Env []string
}

// EnvFor is the environment added to argv's process.
func (r Resolver) EnvFor(argv []string) []string {
	if len(argv) > 0 && argv[0] == "cnperf" {
		return r.Env
	}
	return nil
}

// Resolve returns the executable argv for argv.
func (r Resolver) Resolve(argv []string) ([]string, error) {
	if len(argv) == 0 {
		return nil, errors.New("empty command")
	}
	if argv[0] != "cnperf" {
		return argv, nil
	}
	bin := r.AgentBinary
	if bin == "" {
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("find the cnperf binary for %q: %w", argv[0], err)
		}
		bin = self
	}
	out := append([]string{bin}, argv[1:]...)
	return out, nil
}

// prepare builds an *exec.Cmd in its own process group so the whole tree can be killed; a
// "cnperf" command knows it was started by cnperf (SelfExecEnv).
func prepare(argv []string, env []string) *exec.Cmd {
	return procexec.Command(argv, append([]string{SelfExecEnv + "=1"}, env...))
}

// Exec runs argv (already resolved) with env added to this process's environment to
// completion, bounded by ctx and timeout, in its own process group (procexec.Run). start,
// when not nil, is called to start the command (used to start it inside a network namespace).
func Exec(ctx context.Context, argv, env []string, timeout time.Duration, start func(*exec.Cmd) error) driver.Output {
	out, trunc := procexec.Run(ctx, argv, procexec.Options{
		Env: append([]string{SelfExecEnv + "=1"}, env...), Timeout: timeout, MaxOutput: MaxOutputBytes, Start: start,
	})
	if trunc.Stdout || trunc.Stderr {
		out.Stderr = append(out.Stderr, []byte(fmt.Sprintf("\n[cnperf: output truncated at %d bytes]", MaxOutputBytes))...)
	}
	return out
}
