package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuildVersionAndImage builds the real binary as a release (version stamped with
// -ldflags, as goreleaser and `make build VERSION=...` do) and as a plain development
// build, and checks that each names the agent image of its own version.
func TestBuildVersionAndImage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cnperf twice")
	}
	dir := t.TempDir()
	for _, c := range []struct {
		name, ldflags, image, note string
	}{
		{"release", "-X github.com/cnperf/cnperf/internal/version.Version=v9.8.7 -X github.com/cnperf/cnperf/internal/version.Commit=abc123",
			"ghcr.io/cnperf/cnperf:v9.8.7", "(published by the cnperf release v9.8.7)"},
		{"dev", "", "ghcr.io/cnperf/cnperf:v0.1.0-dev", "(development build: no registry has ghcr.io/cnperf/cnperf:v0.1.0-dev; build it with `cnperf image build"},
	} {
		t.Run(c.name, func(t *testing.T) {
			bin := filepath.Join(dir, c.name)
			build := exec.Command("go", "build", "-buildvcs=false", "-ldflags", c.ldflags, "-o", bin, ".")
			if out, err := build.CombinedOutput(); err != nil {
				t.Fatalf("go build: %v\n%s", err, out)
			}
			out, err := exec.Command(bin, "version", "--image").Output()
			if err != nil || strings.TrimSpace(string(out)) != c.image {
				t.Errorf("version --image = %q (%v), want %q", out, err, c.image)
			}
			out, err = exec.Command(bin, "version").Output()
			if err != nil || !strings.Contains(string(out), "agent image: "+c.image+" "+c.note) {
				t.Errorf("version printed (%v):\n%s\nwant the line: agent image: %s %s", err, out, c.image, c.note)
			}
			out, err = exec.Command(bin, "version", "--json").Output()
			var v struct {
				Version      string `json:"version"`
				DefaultImage string `json:"defaultImage"`
				Dev          bool   `json:"dev"`
			}
			if err != nil || json.Unmarshal(out, &v) != nil || v.DefaultImage != c.image || v.Dev != (c.name == "dev") ||
				!strings.HasSuffix(c.image, ":"+v.Version) {
				t.Errorf("version --json = %s (%v)", out, err)
			}
		})
	}
}
