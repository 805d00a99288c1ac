package programmingcmd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/interrupt"
	"github.com/cnperf/cnperf/internal/iostreams"
	"github.com/cnperf/cnperf/internal/programming"
)

// TestFlags: the command's flags, parsed as cobra parses them, are refused before any cluster
// is touched when they are bad (a usage error naming the flag), and the kinds run in their own
// order whatever the flag's.
func TestFlags(t *testing.T) {
	for _, c := range []struct {
		args  []string
		err   string
		kinds []programming.Kind
	}{
		{nil, "", []programming.Kind{programming.KindService, programming.KindEndpoint}},
		{[]string{"--kind", "policy-allow,SERVICE,policy-allow"}, "", []programming.Kind{programming.KindService, programming.KindPolicyAllow}},
		{[]string{"--kind", "ingress"}, `--kind "ingress": want service, endpoint, policy-deny, policy-allow`, nil},
		{[]string{"--count", "0"}, "--count 0: want 1 to 10000", nil},
		{[]string{"--interval", "100us"}, "--interval 100µs: want at least 1ms", nil},
		{[]string{"--attempt-timeout", "1ms"}, "--attempt-timeout 1ms: want at least --interval (5ms)", nil},
		{[]string{"--confirm", "0"}, "--confirm 0: want 1 to 1000", nil},
		{[]string{"--timeout", "0s"}, "--settle and --timeout must be positive", nil},
		{[]string{"--standing-policies", "0,-1"}, "--standing-policies -1: want 0 to 99999", nil},
		{[]string{"-o", "csv"}, `unable to match a printer suitable for the output format "csv", allowed formats are: table,json,yaml`, nil},
		{[]string{"--image-pull-policy", "Sometimes"}, `--image-pull-policy "Sometimes"`, nil},
	} {
		o := &Options{}
		cmd := newCommand(iostreams.Streams{}, o)
		if err := cmd.ParseFlags(c.args); err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		s, err := o.validate()
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%v: %v", c.args, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%v: error %v, want %q", c.args, err, c.err)
		case c.err != "" && !errors.As(err, new(*exit.UsageError)):
			t.Errorf("%v: %v is not a usage error", c.args, err)
		case c.err == "" && !slices.Equal(s.kinds, c.kinds):
			t.Errorf("%v: kinds %v, want %v", c.args, s.kinds, c.kinds)
		}
	}
}

// TestInterrupted: an interrupted run says "interrupted" instead of the cancellation the
// stopped step returned (it said "context canceled"), and keeps what else went wrong.
func TestInterrupted(t *testing.T) {
	cutShort := fmt.Errorf("delete namespace x: %w", interrupt.ErrCutShort)
	other := errors.New("remove run's objects: forbidden")
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"nothing returned", nil, "interrupted"},
		{"the cancellation", context.Canceled, "interrupted"},
		{"a wrapped cancellation", fmt.Errorf("create Service s: %w", context.Canceled), "interrupted"},
		{"and a clean-up cut short", errors.Join(context.Canceled, cutShort),
			"interrupted\ndelete namespace x: cut short by a second signal: context canceled"},
		{"and another error", errors.Join(context.Canceled, other), "interrupted\nremove run's objects: forbidden"},
	} {
		err := interrupted(c.err)
		if err.Error() != c.want || exit.Code(err) != exit.Failed {
			t.Errorf("%s: %q (exit %d), want %q (exit %d)", c.name, err, exit.Code(err), c.want, exit.Failed)
		}
	}
}
