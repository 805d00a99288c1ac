// Package agenttoken is the run's secret for the built-in agent (`cnperf agent serve`): how it
// is made and how it is handed over. Platforms, which only pass the token to their endpoints,
// use this small package instead of the load generator.
package agenttoken

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
)

// Env is the environment variable that hands the run's token to `cnperf agent serve` and
// `cnperf agent client` (never a command-line argument: every local user can read those).
const Env = "CNPERF_AGENT_TOKEN"

// New returns a new run token: 32 random bytes as 64 hex digits.
func New() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate agent token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// ForRun is the token a run hands its agents: $CNPERF_AGENT_TOKEN when set (the user's own
// agents, e.g. an external server started by hand), else a new random one.
func ForRun() (string, error) {
	if t := strings.TrimSpace(os.Getenv(Env)); t != "" {
		return t, nil
	}
	return New()
}
