// Package plan expands a plan into the ordered list of cases the runner executes, and
// validates it in one place before anything runs.
package plan

import (
	"fmt"
	"maps"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// Case is one profile × path × driver × parameters.
type Case struct {
	// Index is the case's position in the plan, from 0.
	Index   int
	Name    string
	Group   string
	Profile api.Profile
	Path    api.Path
	Driver  string
	Params  api.Params
	// Topology is the local lab datapath the case runs on (flavour, MTU, policy rules,
	// backends); nil for every other platform and for loopback. Set by lab.Expand.
	Topology *api.Topology
}

// Duration is the measured time of one sample.
func (c Case) Duration() time.Duration { return seconds(c.Params.DurationSeconds) }

// Warmup is the warm-up time before the first sample.
func (c Case) Warmup() time.Duration { return seconds(c.Params.WarmupSeconds) }

// SampleTimeout bounds one sample: the configured timeout, or duration + warm-up + 30 s.
func (c Case) SampleTimeout() time.Duration {
	if c.Params.TimeoutSeconds > 0 {
		return seconds(c.Params.TimeoutSeconds)
	}
	return c.Duration() + c.Warmup() + 30*time.Second
}

// ResponseSize is the RR response size in bytes (the message size unless set).
func (c Case) ResponseSize() int {
	if c.Params.ResponseSizeBytes > 0 {
		return c.Params.ResponseSizeBytes
	}
	return c.Params.MessageSizeBytes
}

// Option returns a driver option or "".
func (c Case) Option(key string) string { return c.Params.Options[key] }

// MergeOptions returns a new map of a's options overridden by b's (nil when both are empty):
// how the platforms and mesh point a case's servers and clients at their own ports and bind
// addresses without changing the case they were given.
func MergeOptions(a, b map[string]string) map[string]string {
	if len(a) == 0 && len(b) == 0 {
		return nil
	}
	out := make(map[string]string, len(a)+len(b))
	maps.Copy(out, a)
	maps.Copy(out, b)
	return out
}

// String is a short human label: "TCP_STREAM native loopback 1024B x1".
func (c Case) String() string {
	s := fmt.Sprintf("%s %s %s %dB x%d", c.Profile, c.Driver, c.Path, c.Params.MessageSizeBytes, c.Params.Parallel)
	if c.Params.Burst > 0 {
		s += fmt.Sprintf(" burst %d", c.Params.Burst)
	}
	if c.Params.HostNetwork {
		s += " hostNetwork"
	}
	if c.Params.Service {
		s += " service"
	}
	if t := c.Topology; t != nil {
		s += " [" + t.Flavour
		if t.PolicyRules > 0 {
			s += fmt.Sprintf(" %d rules %s", t.PolicyRules, t.PolicyStyle)
		}
		s += "]"
	}
	return s
}

func seconds(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
