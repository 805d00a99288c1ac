// Package version holds the build's version, stamped with -ldflags -X.
package version

// Version is cnperf's version; release builds set it with
// -ldflags "-X github.com/cnperf/cnperf/internal/version.Version=vX.Y.Z".
var Version = "v0.1.0-dev"

// Commit is the source commit, stamped at build time when known.
var Commit = "unknown"

// ImageRepository is where the agent image is published.
const ImageRepository = "ghcr.io/cnperf/cnperf"

// DefaultImageTag is the agent image tag that matches this release line.
// A fixed tag (never :latest) keeps the default pull policy at IfNotPresent.
const DefaultImageTag = "v0.1.0"

// DefaultImage is the agent image the Kubernetes platform deploys unless --image says otherwise.
func DefaultImage() string { return ImageRepository + ":" + DefaultImageTag }
