package plan

import (
	"reflect"
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		err  string
	}{
		{"10s", 10 * time.Second, ""},
		{"1m", time.Minute, ""},
		{"1m30s", 90 * time.Second, ""},
		{"500ms", 500 * time.Millisecond, ""},
		{"10", 10 * time.Second, ""},
		{" 2.5 ", 2500 * time.Millisecond, ""},
		{"-1s", -time.Second, ""},
		{"0", 0, ""},
		{"", 0, "empty duration"},
		{"abc", 0, `"abc" is not a duration (use e.g. 10s, 1m30s, or a number of seconds)`},
		{"10 s", 0, `"10 s" is not a duration (use e.g. 10s, 1m30s, or a number of seconds)`},
		{"1d", 0, `"1d" is not a duration (use e.g. 10s, 1m30s, or a number of seconds)`},
		{"1e300", 0, `"1e300": duration too long`},
		{"999999999h", 0, `"999999999h": duration too long`},
		{"NaN", 0, `"NaN" is not a duration`},
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.in)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("ParseDuration(%q) error %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseRate(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		err  bool
	}{
		{"10k", 10e3, false},
		{"500M", 500e6, false},
		{"1G", 1e9, false},
		{"1.5g", 1.5e9, false},
		{"2T", 2e12, false},
		{"1Gbit/s", 1e9, false},
		{"100Mbps", 100e6, false},
		{"100000", 1e5, false},
		{"0", 0, false},
		{"", 0, true},
		{"fast", 0, true},
		{"-1M", 0, true},
		{"0x10", 0, true},
		{"Inf", 0, true},
		{"G", 0, true},
		{"1e400", 0, true},
		{"NaN", 0, true},
		{"-1", 0, true},
		{"64k", 64e3, false},
	}
	for _, tt := range tests {
		got, err := ParseRate(tt.in)
		if (err != nil) != tt.err || (!tt.err && got != tt.want) {
			t.Errorf("ParseRate(%q) = %v, %v; want %v (error %v)", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int
		err  bool
	}{
		{"1024", 1024, false},
		{"64k", 65536, false},
		{"64K", 65536, false},
		{"128KiB", 131072, false},
		{"1M", 1 << 20, false},
		{"1mib", 1 << 20, false},
		{"1G", 1 << 30, false},
		{"0", 0, false},
		{"-1", -1, false},
		{"k", 0, true},
		{"1.5k", 0, true},
		{"4G", 0, true},
		{"abc", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseSize(tt.in)
		if (err != nil) != tt.err || (!tt.err && got != tt.want) {
			t.Errorf("ParseSize(%q) = %v, %v; want %v (error %v)", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestClosest(t *testing.T) {
	cands := []string{"profiles", "paths", "drivers", "duration", "samples"}
	for in, want := range map[string]string{
		"profile": "profiles", "Profiles": "profiles", "duraton": "duration", "sample": "samples",
		"colour": "", "x": "", "": "",
	} {
		if got := Closest(in, cands); got != want {
			t.Errorf("Closest(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMergeOptions(t *testing.T) {
	a := map[string]string{"port": "1", "bind": "x"}
	for _, tt := range []struct {
		a, b, want map[string]string
	}{
		{nil, nil, nil},
		{map[string]string{}, nil, nil},
		{a, nil, map[string]string{"port": "1", "bind": "x"}},
		{nil, map[string]string{"port": "2"}, map[string]string{"port": "2"}},
		{a, map[string]string{"port": "2"}, map[string]string{"port": "2", "bind": "x"}},
	} {
		if got := MergeOptions(tt.a, tt.b); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("MergeOptions(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
	if a["port"] != "1" {
		t.Errorf("MergeOptions changed its first argument: %v", a)
	}
}
