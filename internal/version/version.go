// Package version holds the build's version and, derived from it, the agent image that this
// binary deploys: a binary and its image always carry the same version.
package version

import (
	"fmt"
	"regexp"
	"runtime/debug"
	"strings"
)

// Version is cnperf's version. Release builds stamp it with
// -ldflags "-X github.com/cnperf/cnperf/internal/version.Version=vX.Y.Z"; `go install
// github.com/cnperf/cnperf/cmd/cnperf@vX.Y.Z` gets it from the module's build information;
// anything else is a development build (DevVersion).
var Version = ""

// Commit is the source commit, stamped at build time or taken from the build information.
var Commit = "unknown"

// DevVersion is the version of a build that was not stamped and has no module version.
const DevVersion = "v0.1.0-dev"

// ImageRepository is where the agent image is published (by the release workflow).
const ImageRepository = "ghcr.io/cnperf/cnperf"

// The linker stamps Version and Commit (-X needs plain string variables), so what is not
// stamped is filled in once at start-up; nothing registers itself here.
func init() { //nolint:gochecknoinits // resolves the linker-stamped values, no registration
	Version, Commit = resolve(Version, Commit, debug.ReadBuildInfo)
}

// resolve fills an unstamped version and commit from the build information. Only a
// release's module version is taken as is; any other unstamped build (a `go build` in a
// checkout, which Go stamps with a pseudo-version, or `go install ...@main`) is DevVersion,
// so that every development build, whatever built it, names the same image.
func resolve(v, commit string, info func() (*debug.BuildInfo, bool)) (string, string) {
	bi, ok := info()
	known := func(c string) bool { return c != "" && c != "unknown" }
	if v == "" && ok {
		switch mv := bi.Main.Version; {
		case mv == "" || mv == "(devel)":
		case !IsDev(mv):
			v = mv
		default:
			if m := pseudoRE.FindStringSubmatch(mv); m != nil && !known(commit) {
				commit = m[3]
			}
		}
	}
	if v == "" {
		v = DevVersion
	}
	if ok && !known(commit) {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && s.Value != "" {
				commit = s.Value
			}
		}
	}
	if commit == "" {
		commit = "unknown"
	}
	return v, commit
}

// releaseRE is a release or pre-release tag: vMAJOR.MINOR.PATCH with an optional
// pre-release such as -rc.1 (and no build metadata).
var releaseRE = regexp.MustCompile(`^v\d+\.\d+\.\d+(-[0-9A-Za-z.]+)?$`)

// pseudoRE is the Go module pseudo-version's timestamp-and-commit tail.
var pseudoRE = regexp.MustCompile(`(^|[-.])(0\.)?\d{14}-([0-9a-f]{12})($|\+)`)

// IsDev reports whether v is a development build's version: not a release tag, a -dev
// version, or a Go pseudo-version (a build of a commit between tags). Nothing publishes
// images for development builds.
func IsDev(v string) bool {
	return !releaseRE.MatchString(v) || strings.HasSuffix(v, "-dev") || strings.Contains(v, "-dev.") ||
		pseudoRE.MatchString(v)
}

// tagBad is what an image tag may not contain ([A-Za-z0-9_.-], at most 128 characters).
var tagBad = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

// ImageTag is the agent image tag for version v: the version itself, with characters a tag
// cannot hold (the + of build metadata) replaced by '-'.
func ImageTag(v string) string {
	t := tagBad.ReplaceAllString(v, "-")
	t = strings.TrimLeft(t, ".-")
	if len(t) > 128 {
		t = t[:128]
	}
	if t == "" {
		t = "dev"
	}
	return t
}

// ImageFor is the agent image of cnperf version v.
func ImageFor(v string) string { return ImageRepository + ":" + ImageTag(v) }

// DefaultImage is the agent image this binary deploys unless --image says otherwise: the
// image of its own version. A fixed tag (never :latest) keeps the pull policy at IfNotPresent.
func DefaultImage() string { return ImageFor(Version) }

// ImageNote says where the default image comes from: published by the release, or, for a
// development build, nowhere until it is built.
func ImageNote() string {
	if IsDev(Version) {
		return fmt.Sprintf("development build: no registry has %s; build it with `cnperf image build --load kind:CLUSTER|containerd` or `cnperf image push REF`, or pass --image", DefaultImage())
	}
	return "published by the cnperf release " + Version
}

// PullRemedy is what to do when the cluster cannot pull (or may not pull) image: the exact
// commands, for the kind of cluster the user has.
func PullRemedy(image string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "the nodes cannot get the agent image %s", image)
	tag := ""
	if image == DefaultImage() {
		if IsDev(Version) {
			fmt.Fprintf(&b, " (this is a development build of cnperf, %s: no registry publishes its image)", Version)
		}
	} else {
		tag = " --tag " + image
	}
	b.WriteString(". Either:\n")
	b.WriteString("  - put this build's image in a registry the nodes can pull from and use it:\n")
	b.WriteString("      cnperf image push REGISTRY/cnperf:TAG   then   cnperf run --image REGISTRY/cnperf:TAG ...\n")
	fmt.Fprintf(&b, "  - or load it into every node under the name %s (no registry):\n", image)
	fmt.Fprintf(&b, "      kind:        cnperf image build%s --load kind:CLUSTER\n", tag)
	fmt.Fprintf(&b, "      containerd:  cnperf image build%s -o cnperf-agent.tar, then on every node\n", tag)
	b.WriteString("                   ctr -n k8s.io images import cnperf-agent.tar\n")
	b.WriteString("  - or build the full image (every tool) from the Containerfile with docker or podman and pass --image")
	return b.String()
}
