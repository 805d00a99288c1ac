package cleanupcmd

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/iostreams"
)

func TestBadKubeconfigIsUsageError(t *testing.T) {
	var out, errb bytes.Buffer
	cmd := NewCommand(iostreams.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errb})
	missing := filepath.Join(t.TempDir(), "missing")
	cmd.SetArgs([]string{"--kubeconfig", missing, "--run", "x"})
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	err := cmd.ExecuteContext(context.Background())
	if exit.Code(err) != exit.BadInput || !strings.Contains(err.Error(), missing) {
		t.Errorf("err = %v (exit %d), want a usage error naming the file", err, exit.Code(err))
	}
	if out.Len() != 0 {
		t.Errorf("stdout %q", out.String())
	}
}

func TestFlags(t *testing.T) {
	cmd := NewCommand(iostreams.Streams{})
	for _, f := range []string{"kubeconfig", "context", "run", "namespace", "dry-run", "no-wait", "timeout"} {
		if cmd.Flags().Lookup(f) == nil {
			t.Errorf("no --%s", f)
		}
	}
	if cmd.Flags().ShorthandLookup("n") == nil {
		t.Error("no -n")
	}
}
