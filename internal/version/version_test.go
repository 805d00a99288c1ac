package version

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	info := func(v string, settings ...debug.BuildSetting) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			return &debug.BuildInfo{Main: debug.Module{Path: "github.com/cnperf/cnperf", Version: v}, Settings: settings}, true
		}
	}
	none := func() (*debug.BuildInfo, bool) { return nil, false }
	rev := debug.BuildSetting{Key: "vcs.revision", Value: "0efdff8"}
	for _, c := range []struct {
		name            string
		stamped, commit string
		info            func() (*debug.BuildInfo, bool)
		wantV, wantC    string
	}{
		{"ldflags win", "v0.2.0", "abc", info("v0.3.0", rev), "v0.2.0", "abc"},
		{"go install @tag", "", "unknown", info("v0.2.0"), "v0.2.0", "unknown"},
		{"go build in a checkout", "", "unknown", info("(devel)", rev), DevVersion, "0efdff8"},
		{"no build info", "", "", none, DevVersion, "unknown"},
		{"go build with VCS stamping", "", "unknown", info("v0.0.0-20261126095748-0efdff8abcde+dirty", rev), DevVersion, "0efdff8abcde"},
		{"go install @main", "", "unknown", info("v0.2.1-0.20261126095748-0efdff8abcde"), DevVersion, "0efdff8abcde"},
		{"go install @prerelease", "", "unknown", info("v0.3.0-rc.1"), "v0.3.0-rc.1", "unknown"},
	} {
		t.Run(c.name, func(t *testing.T) {
			v, commit := resolve(c.stamped, c.commit, c.info)
			if v != c.wantV || commit != c.wantC {
				t.Errorf("resolve = %q, %q; want %q, %q", v, commit, c.wantV, c.wantC)
			}
		})
	}
}

func TestImageFor(t *testing.T) {
	for _, c := range []struct {
		v, image string
		dev      bool
	}{
		{"v0.1.0", "ghcr.io/cnperf/cnperf:v0.1.0", false},
		{"v1.2.3-rc.1", "ghcr.io/cnperf/cnperf:v1.2.3-rc.1", false},
		{"v0.1.0-dev", "ghcr.io/cnperf/cnperf:v0.1.0-dev", true},
		{"v0.2.0-dev.3", "ghcr.io/cnperf/cnperf:v0.2.0-dev.3", true},
		{"v0.0.0-20261126095748-0efdff8abcde", "ghcr.io/cnperf/cnperf:v0.0.0-20261126095748-0efdff8abcde", true},
		{"v0.2.1-0.20261126095748-0efdff8abcde", "ghcr.io/cnperf/cnperf:v0.2.1-0.20261126095748-0efdff8abcde", true},
		{"v0.0.0-20261126095748-0efdff8abcde+dirty", "ghcr.io/cnperf/cnperf:v0.0.0-20261126095748-0efdff8abcde-dirty", true},
		{"v0.2.0-3-g0efdff8-dirty", "ghcr.io/cnperf/cnperf:v0.2.0-3-g0efdff8-dirty", true}, // git describe between tags,
		{"my build", "ghcr.io/cnperf/cnperf:my-build", true},
		{"", "ghcr.io/cnperf/cnperf:dev", true},
	} {
		if got := ImageFor(c.v); got != c.image {
			t.Errorf("ImageFor(%q) = %q, want %q", c.v, got, c.image)
		}
		if got := IsDev(c.v); got != c.dev {
			t.Errorf("IsDev(%q) = %v, want %v", c.v, got, c.dev)
		}
	}
}

func TestDefaultImageFollowsVersion(t *testing.T) {
	defer func(v string) { Version = v }(Version)
	for _, c := range []struct {
		v, image, note string
	}{
		{"v0.4.0", "ghcr.io/cnperf/cnperf:v0.4.0", "published by the cnperf release v0.4.0"},
		{"v0.4.0-dev", "ghcr.io/cnperf/cnperf:v0.4.0-dev", "development build: no registry has ghcr.io/cnperf/cnperf:v0.4.0-dev"},
	} {
		Version = c.v
		if got := DefaultImage(); got != c.image {
			t.Errorf("version %s: DefaultImage() = %q, want %q", c.v, got, c.image)
		}
		if got := ImageNote(); !strings.HasPrefix(got, c.note) {
			t.Errorf("version %s: ImageNote() = %q, want it to start with %q", c.v, got, c.note)
		}
	}
}

func TestPullRemedy(t *testing.T) {
	defer func(v string) { Version = v }(Version)
	Version = "v0.4.0-dev"
	got := PullRemedy(DefaultImage())
	for _, want := range []string{
		"ghcr.io/cnperf/cnperf:v0.4.0-dev (this is a development build of cnperf, v0.4.0-dev",
		"cnperf image push REGISTRY/cnperf:TAG   then   cnperf run --image REGISTRY/cnperf:TAG",
		"cnperf image build --load kind:CLUSTER\n",
		"cnperf image build -o cnperf-agent.tar, then on every node",
		"ctr -n k8s.io images import cnperf-agent.tar",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("remedy lacks %q:\n%s", want, got)
		}
	}
	Version = "v0.4.0"
	got = PullRemedy("registry.example:5000/cnperf:mine")
	for _, want := range []string{
		"cnperf image build --tag registry.example:5000/cnperf:mine --load kind:CLUSTER",
		"cnperf image build --tag registry.example:5000/cnperf:mine -o cnperf-agent.tar",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("remedy lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "development build") {
		t.Errorf("a release build's remedy calls it a development build:\n%s", got)
	}
}
