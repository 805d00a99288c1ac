package runcmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/iostreams"
)

const vmPlanHead = "apiVersion: cnperf.dev/v1alpha1\nkind: Plan\n"

const vmPlanTests = "tests:\n  - profiles: [TCP_RR]\n    paths: [pod-pod-cross-node]\n    drivers: [native]\n"

// dryRunPlan runs `cnperf run --dry-run -c plan.yaml` with the plan written to a file, and
// returns what it printed under "platform: ..." before the cases (wrapped lines joined with a
// space), or its error.
func dryRunPlan(t *testing.T, planYAML string, args ...string) (notes string, err error) {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(file, []byte(planYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	c := newCommand(iostreams.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errb}, &Options{})
	c.SetArgs(append([]string{"--dry-run", "-c", file}, args...))
	c.SetOut(&errb)
	c.SetErr(&errb)
	if err := c.ExecuteContext(context.Background()); err != nil {
		return "", err
	}
	lines := strings.Split(out.String(), "\n")
	var got []string
	for _, l := range lines[1:] {
		if strings.HasPrefix(l, "#") {
			break
		}
		if utf8.RuneCountInString(l) > 120 {
			t.Errorf("a line of more than 120 columns: %s", l)
		}
		got = append(got, strings.TrimSpace(l))
	}
	return strings.ReplaceAll(strings.Join(got, " "), dir+"/", ""), nil
}

// TestPlanVM: a plan's vm block sets the VM endpoints of the run as the --vm flags do, the flags
// override its fields one by one, --dry-run says where the settings came from, and a bad value
// the plan gave is reported at its line (checked where the flags' are: one check for both).
func TestPlanVM(t *testing.T) {
	img := "localhost/cnperf-kubevirt/cnperf-guest:v1.0.1"
	full := vmPlanHead + "vm:\n  endpoints: server\n  image: " + img + "\n  binding: bridge\n  sockets: 2\n  cores: 2\n  threads: 1\n" +
		"  memory: 1Gi\n  startTimeout: 5m\n" + vmPlanTests
	kube := []string{"--platform", "kube"}
	for _, tc := range []struct {
		name    string
		plan    string
		args    []string
		want    string // the notes under the platform
		wantErr string
	}{
		{name: "no vm block", plan: vmPlanHead + vmPlanTests, args: kube},
		{name: "every setting", plan: full, args: kube,
			want: "the server is a VM (KubeVirt): image " + img + ", bridge binding, 4 vCPUs (sockets 2, cores 2, threads 1), 1Gi memory " +
				"VM settings from plan.yaml:3 (vm)"},
		{name: "flags override fields", plan: full, args: append([]string{"--vm=both", "--vm-binding", "masquerade", "--cores", "1"}, kube...),
			want: "the server and the client are VMs (KubeVirt): image " + img + ", masquerade binding, 2 vCPUs (sockets 2, cores 1, threads 1), " +
				"1Gi memory VM settings from plan.yaml:3 (vm); the command line's --vm, --vm-binding, --cores override the plan's"},
		{name: "defaults for what the plan leaves out", plan: vmPlanHead + "vm:\n  endpoints: client\n  image: " + img + "\n" + vmPlanTests, args: kube,
			want: "the client is a VM (KubeVirt): image " + img + ", masquerade binding, 1 vCPU (sockets 1, cores 1, threads 1), 512Mi memory " +
				"VM settings from plan.yaml:3 (vm)"},
		{name: "endpoints from --vm", plan: vmPlanHead + "vm:\n  image: " + img + "\n" + vmPlanTests, args: append([]string{"--vm=client"}, kube...),
			want: "the client is a VM (KubeVirt): image " + img + ", masquerade binding, 1 vCPU (sockets 1, cores 1, threads 1), 512Mi memory " +
				"VM settings from plan.yaml:3 (vm)"},
		{name: "a bad value the flag replaces", plan: strings.Replace(full, "binding: bridge", "binding: tap", 1), args: append([]string{"--vm-binding", "bridge"}, kube...),
			want: "the server is a VM (KubeVirt): image " + img + ", bridge binding, 4 vCPUs (sockets 2, cores 2, threads 1), 1Gi memory " +
				"VM settings from plan.yaml:3 (vm); the command line's --vm-binding override the plan's"},
		// --vm=none: pods, whatever the plan says
		{name: "--vm=none", plan: full, args: append([]string{"--vm=none"}, kube...),
			want: "no VMs: --vm=none turns off the plan's vm block (plan.yaml:3)"},
		{name: "--vm=none without a vm block", plan: vmPlanHead + vmPlanTests, args: append([]string{"--vm=none"}, kube...)},
		{name: "--vm=none and a VM flag", plan: full, args: append([]string{"--vm=none", "--vm-image", img}, kube...),
			wantErr: "kube platform: --vm-image: only with --vm (server, client or both)"},
		// bad values, at their line
		{name: "bad binding", plan: strings.Replace(full, "binding: bridge", "binding: tap", 1), args: kube,
			wantErr: `plan.yaml:6: vm.binding: "tap" is not masquerade, bridge or passt`},
		{name: "bad endpoints", plan: strings.Replace(full, "endpoints: server", "endpoints: guest", 1), args: kube,
			wantErr: `plan.yaml:4: vm.endpoints: "guest" is not server, client or both`},
		{name: "too many sockets", plan: strings.Replace(full, "sockets: 2", "sockets: 65", 1), args: kube,
			wantErr: "plan.yaml:7: vm.sockets: 65 is not in 1..64"},
		{name: "small memory", plan: strings.Replace(full, "memory: 1Gi", "memory: 64Mi", 1), args: kube,
			wantErr: `plan.yaml:10: vm.memory: "64Mi" is not a quantity of at least 128Mi, e.g. 512Mi`},
		{name: "bad start timeout", plan: strings.Replace(full, "startTimeout: 5m", "startTimeout: soon", 1), args: kube,
			wantErr: `plan.yaml:11: vm.startTimeout: "soon" is not a duration`},
		{name: "negative start timeout", plan: strings.Replace(full, "startTimeout: 5m", "startTimeout: -5m", 1), args: kube,
			wantErr: "plan.yaml:11: vm.startTimeout: -5m0s is negative (0 is the default, 10m0s)"},
		{name: "no image", plan: vmPlanHead + "vm:\n  endpoints: both\n" + vmPlanTests, args: kube,
			wantErr: "plan.yaml:3: vm.image: missing: the cnperf guest image"},
		{name: "no endpoints", plan: vmPlanHead + "vm:\n  image: " + img + "\n" + vmPlanTests, args: kube,
			wantErr: "plan.yaml:3: vm: no endpoints: say which endpoints are VMs, endpoints: server, client or both (or --vm on the command line)"},
		{name: "a bad flag is the flag's", plan: full, args: append([]string{"--sockets", "99"}, kube...),
			wantErr: "kube platform: --sockets: 99 is not in 1..64"},
		{name: "not on the local platform", plan: full, args: []string{"--platform", "local"},
			wantErr: "plan.yaml:4: vm.endpoints: only on the kube platform (its endpoints are KubeVirt VMs), not on local"},
		{name: "misspelt field", plan: strings.Replace(full, "memory:", "memroy:", 1), args: kube,
			wantErr: `plan.yaml:10: vm.memroy: unknown field "memroy" (did you mean "memory"?)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := dryRunPlan(t, tc.plan, tc.args...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				if exit.Code(err) != exit.BadInput {
					t.Errorf("exit status %d, want %d (bad input)", exit.Code(err), exit.BadInput)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("notes under the platform:\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

// TestVMPlanExample: deploy/plans/vm.yaml, the example docs/vm.md shows, is a valid plan whose
// VMs --dry-run describes.
func TestVMPlanExample(t *testing.T) {
	data, err := os.ReadFile("../../../deploy/plans/vm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got, err := dryRunPlan(t, string(data), "--platform", "kube")
	if err != nil {
		t.Fatal(err)
	}
	want := "the server and the client are VMs (KubeVirt): image localhost/cnperf-kubevirt/cnperf-guest:v1.0.1, masquerade binding, " +
		"4 vCPUs (sockets 2, cores 2, threads 1), 1Gi memory VM settings from plan.yaml:14 (vm)"
	if got != want {
		t.Errorf("notes:\n%q\nwant\n%q", got, want)
	}
}
