package imagecmd

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/iostreams"
	"github.com/cnperf/cnperf/internal/text"
)

func run(args ...string) (string, string, error) {
	var out, errb bytes.Buffer
	c := NewCommand(iostreams.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errb})
	c.SetArgs(args)
	c.SetOut(io.Discard)
	c.SetErr(io.Discard)
	err := c.ExecuteContext(context.Background())
	return out.String(), errb.String(), err
}

// TestBuildAndPush: build an archive from a given static binary, push it to a registry on
// loopback; a binary that cannot say its image needs --tag; this (dynamically linked) test
// binary cannot go into a scratch image.
func TestBuildAndPush(t *testing.T) {
	const busybox = "/usr/bin/busybox"
	if _, err := os.Stat(busybox); err != nil {
		t.Skip("no busybox-static")
	}
	dir := t.TempDir()
	archive := filepath.Join(dir, "agent.tar")
	out, stderr, err := run("build", "--binary", busybox, "--tag", "localhost/cnperf/cnperf:t1", "-o", archive)
	if err != nil || !strings.HasPrefix(out, archive+": localhost/cnperf/cnperf:t1 (sha256:") || !text.ContainsFolded(stderr, "image: layer cnperf") {
		t.Fatalf("build: %v\nstdout %s\nstderr %s", err, out, stderr)
	}
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	ref := strings.TrimPrefix(srv.URL, "http://") + "/cnperf/cnperf:t1"
	out, stderr, err = run("push", "--from", archive, ref)
	if err != nil || !strings.HasPrefix(out, ref+"@sha256:") || !text.ContainsFolded(stderr, "cnperf run --image "+ref) {
		t.Errorf("push: %v\nstdout %s\nstderr %s", err, out, stderr)
	}

	_, _, err = run("build", "--binary", busybox, "-o", archive)
	var ue *exit.UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "pass --tag") {
		t.Errorf("a binary that cannot say its image, without --tag: %v", err)
	}
	if _, _, err = run("build", "-o", archive, "--add", "relative:dst"); !errors.As(err, &ue) || !strings.Contains(err.Error(), "must be absolute") {
		t.Errorf("--add relative:dst: %v", err)
	}
	exe, _ := os.Executable()
	if info, _ := os.ReadFile(exe); !bytes.Contains(info, []byte("/lib64/ld-linux")) {
		t.Skip("this test binary is static")
	}
	if _, _, err = run("build", "-o", archive); err == nil || !strings.Contains(err.Error(), "is dynamically linked") {
		t.Errorf("build with this dynamic binary on scratch: %v", err)
	}
}
