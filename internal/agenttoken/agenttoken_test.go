package agenttoken

import (
	"encoding/hex"
	"testing"
)

func TestNew(t *testing.T) {
	a, err := New()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := New()
	if raw, err := hex.DecodeString(a); err != nil || len(raw) != 32 {
		t.Errorf("New() = %q: want 64 hex digits (%v)", a, err)
	}
	if a == b {
		t.Errorf("two tokens are the same: %q", a)
	}
}

func TestForRun(t *testing.T) {
	for _, tc := range []struct{ env, want string }{
		{env: "  mine-0123456789abcdef \n", want: "mine-0123456789abcdef"},
		{env: "", want: ""}, // a new random one
		{env: " \t", want: ""},
	} {
		t.Setenv(Env, tc.env)
		got, err := ForRun()
		if err != nil {
			t.Fatal(err)
		}
		if tc.want != "" && got != tc.want {
			t.Errorf("$%s=%q: ForRun() = %q, want %q", Env, tc.env, got, tc.want)
		}
		if tc.want == "" && len(got) != 64 {
			t.Errorf("$%s=%q: ForRun() = %q, want a new 64-digit token", Env, tc.env, got)
		}
	}
}
