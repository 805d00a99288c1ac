package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/app"
	"github.com/cnperf/cnperf/internal/iostreams"
	"github.com/cnperf/cnperf/internal/pathmtu"
	"github.com/cnperf/cnperf/internal/text"
)

// TestPathMTULab runs `cnperf run --check-mtu` on three namespace labs: a healthy one (no
// finding), one whose pods have MTU 1500 on 1400-byte node links (the nodes answer with ICMP
// "fragmentation needed": path-MTU discovery works, the finding says so), and the same with
// that ICMP dropped by an nftables rule on the nodes (a black hole). Each lab is removed at
// the end of its run; the test checks that none of its namespaces is left.
func TestPathMTULab(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the namespace lab needs root")
	}
	if _, err := exec.LookPath("nft"); err != nil {
		t.Skip("the lab's ICMP-dropping rule needs nft (apt-get install nftables)")
	}
	tests := []struct {
		name    string
		args    []string
		finding string
		largest int // pod-pod-cross-node, both ways
		tooBig  int
	}{
		{name: "healthy", args: []string{"--mtu", "1500"}, largest: 1500},
		{name: "PMTUD works", args: []string{"--mtu", "1400", "--lab-pod-mtu", "1500"}, finding: pathmtu.FindingPMTUD,
			largest: 1400, tooBig: 1400},
		{name: "black hole", args: []string{"--mtu", "1400", "--lab-pod-mtu", "1500", "--lab-drop-frag-needed"},
			finding: pathmtu.FindingBlackHole, largest: 1400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"--check-mtu", "--path", "pod-pod-cross-node,host-host", "--overlay", "routed",
				"--profile", "TCP_RR", "--duration", "1s", "--samples", "1"}, tt.args...)
			r, stderr, err := cnperf(t, args...)
			ok(t, r, stderr, err)
			defer noLabLeft(t, r.UUID)
			if len(r.PathMTU) != 2 {
				t.Fatalf("%d path-MTU checks, want 2 (pod-pod-cross-node, host-host): %+v\n%s", len(r.PathMTU), r.PathMTU, stderr)
			}
			for _, m := range r.PathMTU {
				for _, p := range []api.PathMTUProbe{m.Forward, m.Reverse} {
					if p.Error != "" || p.From == "" || p.Probes == 0 {
						t.Errorf("%s: probe %+v", m.Path, p)
					}
				}
				switch m.Path {
				case api.PathHostHost: // the nodes' own link: as its MTU, whatever the pods have
					if m.Finding != "" || m.Forward.LargestBytes != m.Forward.InterfaceMTUBytes {
						t.Errorf("host-host: %+v", m)
					}
				case api.PathPodPodCrossNode:
					if m.Finding != tt.finding {
						t.Errorf("finding %q, want %q: %s", m.Finding, tt.finding, m.Consequence)
					}
					for _, p := range []api.PathMTUProbe{m.Forward, m.Reverse} {
						if p.LargestBytes != tt.largest || p.TooBigMTUBytes != tt.tooBig {
							t.Errorf("%+v: want largest %d, too big %d", p, tt.largest, tt.tooBig)
						}
					}
				}
			}
			if tt.finding == "" && text.ContainsFolded(stderr, "warning: path MTU") {
				t.Errorf("a healthy lab warned:\n%s", stderr)
			}
			if tt.finding != "" && !text.ContainsFolded(stderr, "warning: path MTU pod-pod-cross-node routed mtu1400: "+strings.ToUpper(tt.finding)) {
				t.Errorf("no warning naming the finding:\n%s", stderr)
			}
		})
	}
}

// noLabLeft fails the test when a namespace of the run's lab is still there.
func noLabLeft(t *testing.T, runID string) {
	t.Helper()
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		t.Fatalf("ip netns list: %v", err)
	}
	if tag := "cnp-" + runID[:6]; strings.Contains(string(out), tag) {
		t.Errorf("namespaces of lab %s left behind:\n%s", tag, out)
	}
}

// TestAgentMTULoopback probes loopback over IPv4 and IPv6 with `cnperf agent mtu`: the largest
// packet is the interface's (IPv4 stops at 65535 bytes), in one echo request.
func TestAgentMTULoopback(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a raw ICMP socket needs root (CAP_NET_RAW)")
	}
	for _, tt := range []struct{ target string }{{"127.0.0.1"}, {"::1"}} {
		t.Run(tt.target, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var out, errb bytes.Buffer
			err := app.Run(ctx, iostreams.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errb},
				[]string{"agent", "mtu", "--target", tt.target})
			if err != nil {
				t.Fatalf("%v\n%s%s", err, out.String(), errb.String())
			}
			var p api.PathMTUProbe
			if err := json.Unmarshal(out.Bytes(), &p); err != nil {
				t.Fatalf("%v: %s", err, out.String())
			}
			if p.LargestBytes != p.InterfaceMTUBytes || p.LargestBytes < 65535 || p.Probes != 1 || p.TooBigMTUBytes != 0 {
				t.Errorf("%+v", p)
			}
		})
	}
}
