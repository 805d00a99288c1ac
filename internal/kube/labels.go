package kube

import (
	"fmt"
	"strings"
)

// Labels on every object cnperf creates. `cnperf cleanup` finds leftovers by them.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedByValue = "cnperf"
	LabelName      = "app.kubernetes.io/name"
	LabelRun       = "cnperf.dev/run"
	LabelRole      = "cnperf.dev/role"     // server or client
	LabelDriver    = "cnperf.dev/driver"   // servers: the driver they serve
	LabelNetwork   = "cnperf.dev/network"  // pod or host
	LabelEndpoint  = "cnperf.dev/endpoint" // the pod's own name; Services select on it
	// ServiceAccountName is the account endpoint pods run as. It has no RBAC bindings: the
	// endpoints never call the API, and its token is not mounted.
	ServiceAccountName = "cnperf"
	// ClientContainer is the container commands are exec'ed in.
	ClientContainer = "client"
)

// startupProbeFailures lets the startup probe try for as long as the start-up wait allows;
// cnperf's own wait (with its timeout) decides when to give up.
const startupProbeFailures = 3600

// TerminationGraceSeconds is short: endpoints hold no state worth a graceful shutdown.
const TerminationGraceSeconds int64 = 2

// IdleCommand keeps a container running until it is told to stop, and stops at once (sh as PID
// 1 ignores SIGTERM without a trap, which would hold every deletion for the grace period):
// client pods (commands are exec'ed in them), mesh's client containers, tiger-bench's standing
// pods.
var IdleCommand = []string{"sh", "-c", "trap 'exit 0' TERM INT; while :; do sleep 3600 & wait $!; done"}

// RunLabels are the labels that tie an object to a run (platform, mesh, tiger-bench, load).
func RunLabels(runID string) map[string]string {
	return map[string]string{LabelManagedBy: ManagedByValue, LabelName: "cnperf", LabelRun: runID}
}

// RunSelector selects every object of one run; ManagedSelector every object cnperf made.
func RunSelector(runID string) string {
	return fmt.Sprintf("%s=%s,%s=%s", LabelManagedBy, ManagedByValue, LabelRun, runID)
}

// ManagedSelector selects every object cnperf made, of any run.
func ManagedSelector() string { return LabelManagedBy + "=" + ManagedByValue }

// ShortID is a name suffix from the run id: unique enough within a namespace, readable.
func ShortID(runID string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(runID) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
		if b.Len() == 8 {
			break
		}
	}
	if b.Len() == 0 {
		return "run"
	}
	return b.String()
}
