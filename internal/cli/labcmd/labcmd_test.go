package labcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/iostreams"
	"github.com/cnperf/cnperf/internal/lab"
)

func runCmd(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	c := NewCommand(iostreams.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	c.SetArgs(args)
	c.SetOut(&out)
	c.SetErr(&errOut)
	err := c.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"up", "--path", "loopback"}, `--path "loopback"`},
		{[]string{"up", "--mtu", "10"}, "--mtu 10"},
		{[]string{"down", "nothex"}, "is not a lab tag"},
		{[]string{"list", "-o", "jsn"}, `unable to match a printer suitable for the output format "jsn", allowed formats are: table,json,yaml (did you mean "json"?)`},
	} {
		_, _, err := runCmd(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("lab %v: %v, want %q", tc.args, err, tc.want)
		}
	}
}

// TestUpListDown builds a detached lab, finds it in the list, and removes it with down.
func TestUpListDown(t *testing.T) {
	if err := lab.CheckPrivileges(); err != nil {
		t.Skip(err)
	}
	if _, err := exec.LookPath("nft"); err != nil {
		t.Skip("needs nftables")
	}
	runID := "c0ffee00-1111-4222-8333-444455556666"
	t.Cleanup(func() { _, _ = lab.Cleanup(context.Background(), lab.CleanupOptions{Tag: "c0ffee", Force: true}) })
	out, _, err := runCmd(t, "up", "--run-id", runID, "--path", "host-host,pod-pod-same-node")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "cnp-c0ffee-routed-node1") || !strings.Contains(out, "pod-pod-same-node") {
		t.Errorf("lab up output:\n%s", out)
	}
	out, _, err = runCmd(t, "list", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var runs []lab.RunInfo
	if err := json.Unmarshal([]byte(out), &runs); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	found := false
	for _, r := range runs {
		if r.Tag == "c0ffee" {
			found = true
			if r.Alive || r.RunID != runID || len(r.Namespaces) != 6 {
				t.Errorf("listed %+v; want detached, run %s, 6 namespaces", r, runID)
			}
		}
	}
	if !found {
		t.Fatalf("lab list does not show the lab:\n%s", out)
	}
	if out, _, err = runCmd(t, "list", "-o", "yaml"); err != nil || !strings.Contains(out, "tag: c0ffee\n") {
		t.Errorf("lab list -o yaml (%v):\n%s", err, out)
	}
	// A detached lab counts as left over: cleanup removes it; here down does.
	out, _, err = runCmd(t, "down", "c0ffee")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(out, "removed netns cnp-c0ffee-") != 6 {
		t.Errorf("lab down output:\n%s", out)
	}
	if _, _, err := runCmd(t, "down", "c0ffee"); err == nil || !strings.Contains(err.Error(), "no lab with tag") {
		t.Errorf("second down: %v", err)
	}
	ns, _ := exec.Command("ip", "netns", "list").Output()
	if strings.Contains(string(ns), "cnp-c0ffee") {
		t.Errorf("ip netns list after down:\n%s", ns)
	}
}
