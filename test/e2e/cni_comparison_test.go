//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/runfile"
)

// TestCNIComparison checks what test/e2e/harness/e2e-cnis.sh (make e2e-cnis) made: the same
// plan (deploy/plans/cni-comparison.yaml) run on each CNI in turn. Every CNI's run must hold
// every case of the plan, none failed, each sample with both sides' CPU; its cluster details
// must name the CNI the harness brought up (and, for a real CNI, its mode); and `cnperf
// compare` must have one column per CNI, labelled by the run label cni=CNI-MODE.
func TestCNIComparison(t *testing.T) {
	dir, list := os.Getenv("CNPERF_E2E_CNIS_DIR"), os.Getenv("CNPERF_E2E_CNIS")
	if dir == "" || list == "" {
		t.Skip("CNPERF_E2E_CNIS_DIR/CNPERF_E2E_CNIS unset: run test/e2e/harness/e2e-cnis.sh (make e2e-cnis)")
	}
	ctx := context.Background()
	plan := filepath.Join(repoRoot(t), "deploy", "plans", "cni-comparison.yaml")
	js, errOut, code := kpRunCLI(ctx, "run", "-c", plan, "--platform", "kube", "--dry-run", "-o", "json")
	if code != 0 {
		t.Fatalf("dry run of %s exited %d: %s", plan, code, errOut)
	}
	var cases []json.RawMessage
	if err := json.Unmarshal([]byte(js), &cases); err != nil || len(cases) == 0 {
		t.Fatalf("dry run -o json: %v (%d cases)", err, len(cases))
	}

	files := eachCNIRun(t, dir, list, ".jsonl", func(t *testing.T, cni, mode string, run *api.Run) {
		name := cni + "-" + mode
		if len(run.Results) != len(cases) {
			t.Errorf("%d results, the plan has %d cases", len(run.Results), len(cases))
		}
		for _, r := range run.Results {
			id := string(r.Profile) + " " + string(r.Path) + " parallel " + strconv.Itoa(r.Params.Parallel)
			if r.Error != "" || r.Summary.SamplesFailed > 0 {
				t.Errorf("%s: failed (%d of %d samples): %s", id, r.Summary.SamplesFailed, r.Summary.SamplesTotal, r.Error)
				continue
			}
			for i, s := range r.Samples {
				if s.CPU == nil || s.CPU.Client == nil || s.CPU.Server == nil {
					t.Errorf("%s: sample %d has no CPU of both sides", id, i)
				}
			}
			if r.Profile == "UDP_STREAM" && (r.Summary.PacketsPerSecond == nil || r.Summary.LossPercent == nil) {
				t.Errorf("%s: no packet rate or loss", id)
			}
		}
		c := run.Cluster
		if c == nil {
			t.Fatal("no cluster details")
		}
		if !strings.EqualFold(c.CNI, cni) {
			t.Errorf("cluster details name CNI %q, the harness brought up %s", c.CNI, cni)
		}
		if cni != "bridge" && !strings.Contains(strings.ToLower(c.CNIMode), strings.ReplaceAll(mode, "-", "")) &&
			!strings.Contains(strings.ToLower(c.CNIMode), mode) {
			t.Errorf("cluster details give CNI mode %q, the harness brought up %s", c.CNIMode, mode)
		}
		// Every mode here encapsulates in VXLAN (50 bytes on a 1500-byte underlay) or routes
		// unencapsulated; a CNI that got its pod MTU wrong fragments or drops.
		// Cilium keeps the underlay's MTU on the pod's eth0 and puts the tunnel's 1450 on the
		// pod's routes (cilium-cni: DeviceMTU for the veth, RouteMTU for the routes).
		wantMTU := 1500
		if mode == "vxlan" && cni != "cilium" {
			wantMTU = 1450
		}
		if c.PodMTUBytes != wantMTU {
			t.Errorf("pod MTU %d, want %d for %s", c.PodMTUBytes, wantMTU, mode)
		}
		t.Logf("%s: %d cases, CNI %s %s mode %q, pod MTU %d", name, len(run.Results), c.CNI, c.CNIVersion, c.CNIMode, c.PodMTUBytes)
	})

	out, errOut, code := kpRunCLI(ctx, append([]string{"compare"}, files...)...)
	if code != 0 {
		t.Fatalf("compare exited %d:\n%s%s", code, out, errOut)
	}
	for i, entry := range strings.Fields(list) {
		cni, mode, _ := strings.Cut(entry, ":")
		want := "cni=" + cni + "-" + mode
		if i == 0 {
			want += " (base)"
		}
		if !strings.Contains(out, want) {
			t.Errorf("compare table has no column %q", want)
		}
	}
	// a verdict ends its line when the comparison has two columns (two CNIs)
	if !verdictRE.MatchString(out) {
		t.Errorf("no verdict of a significance test in the comparison:\n%s", out)
	}
	js, errOut, code = kpRunCLI(ctx, append([]string{"compare", "-o", "json"}, files...)...)
	if code != 0 || !json.Valid([]byte(js)) {
		t.Errorf("compare -o json exited %d or is not JSON: %s", code, errOut)
	}
	html, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatalf("the HTML report: %v", err)
	}
	for _, entry := range strings.Fields(list) {
		cni, mode, _ := strings.Cut(entry, ":")
		if !strings.Contains(string(html), cni+"-"+mode) {
			t.Errorf("report.html does not name %s-%s", cni, mode)
		}
	}
}

// verdictRE matches a significance test's verdict in compare's table, inside a line or at its end.
var verdictRE = regexp.MustCompile(`(?m) (better|worse|n\.s\.)( |$)`)

// TestCNIProgramming checks the `cnperf programming` runs e2e-cnis.sh made on the CNIs of
// CNIS_PROGRAMMING, after their plan: on each, Service and endpoint programming (kube-proxy)
// and, on a CNI that enforces NetworkPolicy (calico, cilium), policy enforcement; every kind
// CNPERF_E2E_CNIS_PROGRAMMING_COUNT times (issue 32 asks at least 20) from every node, each
// figure between 0 and the timeout with some above 0, their percentiles, error bound and the
// probe's floor (checkFigures); each run labelled cni=CNI-MODE; compare takes them together.
func TestCNIProgramming(t *testing.T) {
	dir, list := os.Getenv("CNPERF_E2E_CNIS_DIR"), os.Getenv("CNPERF_E2E_CNIS_PROGRAMMING")
	if dir == "" || list == "" {
		t.Skip("CNPERF_E2E_CNIS_DIR/CNPERF_E2E_CNIS_PROGRAMMING unset: run test/e2e/harness/e2e-cnis.sh with CNIS_PROGRAMMING")
	}
	count, err := strconv.Atoi(os.Getenv("CNPERF_E2E_CNIS_PROGRAMMING_COUNT"))
	nodes := strings.Fields(os.Getenv("CNPERF_E2E_CNIS_NODES"))
	if err != nil || count < 1 || len(nodes) == 0 {
		t.Fatalf("CNPERF_E2E_CNIS_PROGRAMMING_COUNT=%q, CNPERF_E2E_CNIS_NODES=%q: want a count and the node names",
			os.Getenv("CNPERF_E2E_CNIS_PROGRAMMING_COUNT"), os.Getenv("CNPERF_E2E_CNIS_NODES"))
	}
	const timeout = 30 * time.Second // cnperf programming's default --timeout
	var measured []api.Profile       // the kinds measured, which compare must show
	files := eachCNIRun(t, dir, list, ".programming.jsonl", func(t *testing.T, cni, mode string, run *api.Run) {
		name := cni + "-" + mode
		profiles := []api.Profile{api.ServiceCreate, api.ServiceDelete, api.EndpointAdd, api.EndpointRemove}
		if cni == "calico" || cni == "cilium" {
			profiles = append(profiles, api.PolicyDeny, api.PolicyAllow)
		}
		if kinds := os.Getenv("CNPERF_E2E_CNIS_PROGRAMMING_KINDS"); kinds != "" {
			profiles = programmingProfiles(t, kinds)
		}
		for _, r := range run.Results {
			if !slices.Contains(profiles, r.Profile) {
				t.Errorf("a %s result: the run measures %v only", r.Profile, profiles)
			}
		}
		measured = profiles
		checkFigures(t, run, nodes, profiles, count, timeout)
		checkPolicyComponent(t, run, cni)
		t.Logf("%s: %d results, %d changes of each of %v from %v", name, len(run.Results), count, profiles, nodes)
	})
	if len(files) < 2 {
		return
	}
	out, errOut, code := kpRunCLI(context.Background(), append([]string{"compare"}, files...)...)
	if code != 0 || !strings.Contains(out, string(measured[0])) {
		t.Errorf("compare of the programming runs exited %d, want %s in its table:\n%s%s", code, measured[0], out, errOut)
	}
}

// checkPolicyComponent: on Calico and Cilium (the harness serves Felix's and cilium-agent's
// metrics) every policy result carries the figure of the component that enforces it, read on
// the server's node without error, with observations over the result's changes.
func checkPolicyComponent(t *testing.T, run *api.Run, cni string) {
	t.Helper()
	metric := map[string]string{"calico": "felix_int_dataplane_apply_time_seconds", "cilium": "cilium_policy_implementation_delay"}[cni]
	if metric == "" {
		return
	}
	for _, r := range run.Results {
		if r.Profile != api.PolicyDeny && r.Profile != api.PolicyAllow || r.Programming == nil {
			continue
		}
		c := r.Programming.Component
		if c == nil || c.Metric != metric || strings.Contains(c.Note, "metrics at 127.0.0.1") || c.Count < 1 || c.MeanSeconds <= 0 {
			t.Errorf("%s from %s: component figure %+v, want %s's observations", r.Profile, r.Placement.Client.Node, c, metric)
		}
	}
}

// programmingProfiles are the profiles cnperf programming measures for its --kind list kinds
// (e2e-cnis.sh's CNIS_PROGRAMMING_KINDS).
func programmingProfiles(t *testing.T, kinds string) []api.Profile {
	t.Helper()
	byKind := map[string][]api.Profile{
		"service":      {api.ServiceCreate, api.ServiceDelete},
		"endpoint":     {api.EndpointAdd, api.EndpointRemove},
		"policy-deny":  {api.PolicyDeny},
		"policy-allow": {api.PolicyAllow},
	}
	var profiles []api.Profile
	for _, k := range strings.Split(kinds, ",") {
		ps, ok := byKind[k]
		if !ok {
			t.Fatalf("CNPERF_E2E_CNIS_PROGRAMMING_KINDS=%q: kind %q is not one of service, endpoint, policy-deny, policy-allow", kinds, k)
		}
		profiles = append(profiles, ps...)
	}
	return profiles
}

// eachCNIRun runs check, as a subtest named CNI-MODE, on the one run of each CNI:MODE entry of
// list that e2e-cnis.sh wrote to dir/CNI-MODE+suffix, after checking the file holds one run
// labelled cni=CNI-MODE; it returns the files in list's order (compare's, the first the base).
func eachCNIRun(t *testing.T, dir, list, suffix string, check func(t *testing.T, cni, mode string, run *api.Run)) []string {
	t.Helper()
	var files []string
	for _, entry := range strings.Fields(list) {
		cni, mode, _ := strings.Cut(entry, ":")
		name := cni + "-" + mode
		path := filepath.Join(dir, name+suffix)
		files = append(files, path)
		t.Run(name, func(t *testing.T) {
			runs, err := runfile.Read(path)
			if err != nil || len(runs) != 1 {
				t.Fatalf("read %s: %v (%d runs)", path, err, len(runs))
			}
			if got := runs[0].Labels["cni"]; got != name {
				t.Errorf("run label cni=%q, want %q", got, name)
			}
			check(t, cni, mode, runs[0])
		})
	}
	return files
}
