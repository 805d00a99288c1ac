package platform

import (
	"context"
	"errors"
	"testing"

	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/plan"
)

// familyPlatform is a platform that only says its default IP family.
type familyPlatform struct {
	family string
	err    error
}

func (familyPlatform) Name() string { return "family" }
func (familyPlatform) Prepare(context.Context, []plan.Case, map[string]driver.Driver) error {
	return nil
}
func (familyPlatform) Pair(context.Context, plan.Case) (*Pair, error) { return nil, nil }
func (familyPlatform) Close(context.Context) error                    { return nil }
func (p familyPlatform) DefaultIPFamily(context.Context) (string, error) {
	return p.family, p.err
}

// plainPlatform is a platform without a default family.
type plainPlatform struct{ familyPlatform }

func (plainPlatform) DefaultIPFamily() {} // not FamilyDefaulter's signature

func TestDefaultFamily(t *testing.T) {
	cases := func(fams ...string) []plan.Case {
		var out []plan.Case
		for _, f := range fams {
			c := plan.Case{}
			c.Params.IPFamily = f
			out = append(out, c)
		}
		return out
	}
	broken := errors.New("list nodes: forbidden")
	tests := []struct {
		name    string
		p       Platform
		in      []string
		want    []string
		wantErr error
	}{
		{"IPv6-first platform fills what names none", familyPlatform{family: "ipv6"}, []string{"", "ipv4", "ipv6", ""},
			[]string{"ipv6", "ipv4", "ipv6", "ipv6"}, nil},
		{"IPv4 (\"\") changes nothing", familyPlatform{}, []string{"", "ipv6"}, []string{"", "ipv6"}, nil},
		{"no FamilyDefaulter", plainPlatform{}, []string{""}, []string{""}, nil},
		{"its error", familyPlatform{err: broken}, []string{""}, []string{""}, broken},
	}
	for _, tt := range tests {
		in := cases(tt.in...)
		got, err := DefaultFamily(context.Background(), tt.p, in)
		if !errors.Is(err, tt.wantErr) {
			t.Errorf("%s: error %v, want %v", tt.name, err, tt.wantErr)
		}
		for i, c := range got {
			if c.Params.IPFamily != tt.want[i] {
				t.Errorf("%s: case %d family %q, want %q", tt.name, i, c.Params.IPFamily, tt.want[i])
			}
		}
		if in[0].Params.IPFamily != tt.in[0] {
			t.Errorf("%s: the caller's cases were changed", tt.name)
		}
	}
}
