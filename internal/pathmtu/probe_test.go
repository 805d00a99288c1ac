package pathmtu

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
)

// fakePath answers every request up to limit bytes; above it, it says "too big" with tooBig
// (0: silently drops), and above silentAbove (when not 0) it drops silently. The first lose
// requests are lost whatever their size.
type fakePath struct {
	limit, tooBig, silentAbove, lose int
	sizes                            []int
}

func (f *fakePath) echo(_ context.Context, size int, _ time.Duration) (bool, int, error) {
	f.sizes = append(f.sizes, size)
	if f.lose > 0 {
		f.lose--
		return false, 0, nil
	}
	if size <= f.limit {
		return true, 0, nil
	}
	if f.silentAbove > 0 && size > f.silentAbove {
		return false, 0, nil
	}
	return false, f.tooBig, nil
}

func TestSearch(t *testing.T) {
	tests := []struct {
		name           string
		path           fakePath
		lo, hi         int
		largest        int
		tooBig, probes int
		silent         int
		err            string
	}{
		{name: "healthy: one request", path: fakePath{limit: 1500}, lo: 68, hi: 1500, largest: 1500, probes: 1},
		{name: "black hole at 1400", path: fakePath{limit: 1400}, lo: 68, hi: 1500, largest: 1400, probes: 21, silent: 1401},
		{name: "ICMP for a few bytes above, silence beyond (a pod MTU above its veth peer's)",
			path: fakePath{limit: 1500, tooBig: 1500, silentAbove: 1504}, lo: 68, hi: 9000, largest: 1500, tooBig: 1500, silent: 1505},
		{name: "too big jumps to the announced MTU", path: fakePath{limit: 1450, tooBig: 1450}, lo: 68, hi: 1500, largest: 1450,
			tooBig: 1450, probes: 2},
		{name: "too big announced but not answered: bisect", path: fakePath{limit: 1400, tooBig: 1450}, lo: 68, hi: 1500,
			largest: 1400, tooBig: 1450, probes: 21, silent: 1401},
		{name: "two lost packets are not an MTU", path: fakePath{limit: 1500, lose: 2}, lo: 68, hi: 1500, largest: 1500, probes: 3},
		{name: "nothing answers", path: fakePath{limit: 0}, lo: 68, hi: 1500, silent: 68,
			err: "no echo reply from 10.0.0.2 to 68-byte or 1500-byte requests (3 each): ICMP echo blocked", probes: 6},
		{name: "one size only, unanswered", path: fakePath{limit: 0}, lo: 1280, hi: 1280, silent: 1280,
			err: "no echo reply from 10.0.0.2 to 3 1280-byte requests", probes: 3},
		{name: "bounds upside down", path: fakePath{limit: 1500}, lo: 1280, hi: 1000, err: "nothing to search"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.path
			p := api.PathMTUProbe{To: "10.0.0.2"}
			err := search(context.Background(), &f, tt.lo, tt.hi, 3, time.Millisecond, true, &p)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if p.LargestBytes != tt.largest || p.TooBigMTUBytes != tt.tooBig || p.SilentDropBytes != tt.silent {
				t.Errorf("largest %d, too big %d, silent %d; want %d, %d, %d (sizes %v)", p.LargestBytes, p.TooBigMTUBytes,
					p.SilentDropBytes, tt.largest, tt.tooBig, tt.silent, f.sizes)
			}
			if (tt.probes != 0 && p.Probes != tt.probes) || p.Probes != len(f.sizes) {
				t.Errorf("%d probes counted, %d sent, want %d: %v", p.Probes, len(f.sizes), tt.probes, f.sizes)
			}
		})
	}
}

func TestSearchStopsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := api.PathMTUProbe{}
	if err := search(ctx, &fakePath{limit: 1500}, 68, 1500, 3, time.Millisecond, true, &p); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if p.SilentDropBytes != 0 {
		t.Errorf("an interrupted size counted as dropped silently: %+v", p)
	}
}

func TestAssess(t *testing.T) {
	ok := api.PathMTUProbe{InterfaceMTUBytes: 1500, LargestBytes: 1500}
	hole := api.PathMTUProbe{InterfaceMTUBytes: 1500, LargestBytes: 1400}
	frag := api.PathMTUProbe{InterfaceMTUBytes: 1500, LargestBytes: 1450, TooBigMTUBytes: 1450}
	mixed := api.PathMTUProbe{InterfaceMTUBytes: 9000, LargestBytes: 1500, TooBigMTUBytes: 1500, SilentDropBytes: 1505}
	failed := api.PathMTUProbe{InterfaceMTUBytes: 1500, Error: "no echo reply"}
	tests := []struct {
		name          string
		fwd, rev      api.PathMTUProbe
		finding, want string
	}{
		{"healthy", ok, ok, "", ""},
		{"interface smaller than the peer's is no mismatch", api.PathMTUProbe{InterfaceMTUBytes: 1450, LargestBytes: 1450}, ok, "", ""},
		{"unprobed is no finding", failed, failed, "", ""},
		{"black hole both ways", hole, hole, FindingBlackHole, "packets above 1400 bytes (interface MTU 1500), both ways, are dropped silently"},
		{"black hole one way", hole, ok, FindingBlackHole, "client → server packets above 1400 bytes (interface MTU 1500) are dropped"},
		{"black hole the other way", ok, hole, FindingBlackHole, "server → client packets above 1400 bytes"},
		{"black hole wins over PMTUD", frag, hole, FindingBlackHole, "lower the pod MTU to 1400"},
		{"ICMP for some sizes, silence for larger: a black hole", mixed, ok, FindingBlackHole,
			"client → server packets above 1500 bytes (interface MTU 9000) are dropped silently"},
		{"PMTUD", frag, frag, FindingPMTUD, "both ways, do not fit: an ICMP \"fragmentation needed\" comes back"},
		{"PMTUD, different each way", frag, api.PathMTUProbe{InterfaceMTUBytes: 9000, LargestBytes: 1500, TooBigMTUBytes: 1500},
			FindingPMTUD, "client → server packets above 1450 bytes (interface MTU 1500) and server → client packets above 1500 bytes (interface MTU 9000)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, c := Assess(tt.fwd, tt.rev)
			if f != tt.finding || !strings.Contains(c, tt.want) || (tt.finding == "") != (c == "") {
				t.Errorf("Assess = %q, %q; want %q containing %q", f, c, tt.finding, tt.want)
			}
		})
	}
}

func TestOptionsValidate(t *testing.T) {
	v4, v6 := netip.MustParseAddr("10.0.0.2"), netip.MustParseAddr("fd00::2")
	d := DefaultOptions()
	tests := []struct {
		name string
		o    Options
		err  string
	}{
		{"defaults", Options{Target: v4, Attempts: d.Attempts, Timeout: d.Timeout}, ""},
		{"no target", Options{Attempts: 3, Timeout: time.Second}, "a target address is required"},
		{"attempts", Options{Target: v4, Attempts: 0, Timeout: time.Second}, "attempts 0"},
		{"timeout", Options{Target: v4, Attempts: 1, Timeout: time.Minute}, "timeout 1m0s"},
		{"max below IPv4's minimum", Options{Target: v4, Attempts: 1, Timeout: time.Second, MaxBytes: 60}, "between 68 and 65535"},
		{"max below IPv6's minimum", Options{Target: v6, Attempts: 1, Timeout: time.Second, MaxBytes: 1000}, "between 1280 and 65535"},
		{"IPv6 max", Options{Target: v6, Attempts: 1, Timeout: time.Second, MaxBytes: 9000}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.o.Validate()
			if (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
				t.Errorf("Validate() = %v, want %q", err, tt.err)
			}
		})
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		out  driver.Output
		want api.PathMTUProbe
		err  string
	}{
		{"result", driver.Output{Stdout: []byte(`{"from":"10.0.0.1","to":"10.0.0.2","interfaceMTUBytes":1500,"largestBytes":1400,"probes":29}` + "\n")},
			api.PathMTUProbe{From: "10.0.0.1", To: "10.0.0.2", InterfaceMTUBytes: 1500, LargestBytes: 1400, Probes: 29}, ""},
		{"the probe's own failure, exit 1", driver.Output{ExitCode: 1, Stdout: []byte(`{"to":"10.0.0.2","error":"no echo reply"}`),
			Stderr: []byte("cnperf: agent mtu: no echo reply")}, api.PathMTUProbe{To: "10.0.0.2", Error: "no echo reply"}, ""},
		{"an old agent", driver.Output{ExitCode: 2, Stderr: []byte(`Error: unknown command "mtu" for "cnperf agent"`)}, api.PathMTUProbe{},
			`cnperf agent mtu printed no result: Error: unknown command "mtu"`},
		{"exec failed", driver.Output{ExitCode: -1, Err: errors.New("pod gone")}, api.PathMTUProbe{}, "printed no result: pod gone"},
		{"nothing at all", driver.Output{}, api.PathMTUProbe{}, "exit code 0, no output"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.out)
			if (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
				t.Fatalf("err = %v, want %q", err, tt.err)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestArgv(t *testing.T) {
	got := strings.Join(Argv("10.0.0.2", DefaultOptions()), " ")
	if want := "cnperf agent mtu --target 10.0.0.2 --attempts 3 --timeout 300ms"; got != want {
		t.Errorf("Argv = %q, want %q", got, want)
	}
}

func TestChecksum(t *testing.T) {
	// RFC 1071's example: 0001 f203 f4f5 f6f7 sums to ddf2, whose complement is 220d.
	if got := checksum([]byte{0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7}); got != 0x220d {
		t.Errorf("checksum = %#04x, want 0x220d", got)
	}
	if got := checksum([]byte{0x08, 0x00, 0x00, 0x00, 0x12, 0x34, 0x00, 0x01, 0xab}); got == 0 {
		t.Error("odd-length checksum is 0")
	}
}
