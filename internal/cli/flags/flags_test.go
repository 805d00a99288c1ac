package flags

import (
	"bytes"
	"errors"
	"io"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/platform/kube"
	"github.com/cnperf/cnperf/internal/sink"
	"github.com/cnperf/cnperf/internal/tigerbench"
)

func TestLab(t *testing.T) {
	o := lab.DefaultOptions()
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	Lab(fs, &o)
	err := fs.Parse([]string{"--mtu", "9000", "--overlay", "vxlan", "--policy-rules", "0,100,1000,10000",
		"--policy-style", "sets", "--service-proxy", "nftables,iptables", "--service-backends", "3",
		"--underlay", "veth", "--lab-cidr", "10.99.0.0/16", "--service-affinity=false",
		"--lab-pod-mtu", "9100", "--lab-drop-frag-needed"})
	if err != nil {
		t.Fatal(err)
	}
	if o.MTUBytes != 9000 || o.Overlays[0] != "vxlan" || len(o.PolicyRules) != 4 || o.PolicyRules[3] != 10000 ||
		o.PolicyStyles[0] != "sets" || len(o.ServiceProxies) != 2 || o.ServiceBackends != 3 || o.Underlay != "veth" ||
		o.CIDR != "10.99.0.0/16" || o.ServiceAffinity || o.PodMTUBytes != 9100 || !o.DropFragNeeded {
		t.Errorf("flags not applied: %+v", o)
	}
	if err := o.Validate(); err != nil {
		t.Error(err)
	}
}

func TestSinks(t *testing.T) {
	var f sink.Options
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	Sinks(fs, &f)
	if f.Index == "" {
		t.Error("--index has no default")
	}
	if err := fs.Parse([]string{"--opensearch", "https://os:9200", "--index", "perf", "--opensearch-username", "bob",
		"--opensearch-password-file", "pw", "--prometheus", "https://prom:9090", "--prometheus-token-file", "tok",
		"--push-gateway", "http://pg:9091", "--push-job", "nightly", "--insecure-skip-tls-verify", "--ca-file", "ca.pem", "--allow-plain-http-credentials"}); err != nil {
		t.Fatal(err)
	}
	want := sink.Options{OpenSearchURL: "https://os:9200", Index: "perf", OpenSearchUsername: "bob",
		OpenSearchPasswordFile: "pw", PrometheusURL: "https://prom:9090", PrometheusTokenFile: "tok",
		PushGatewayURL: "http://pg:9091", PushJob: "nightly", InsecureSkipTLSVerify: true, CAFile: "ca.pem", AllowPlainHTTP: true}
	if f != want {
		t.Errorf("flags not applied:\n got %+v\nwant %+v", f, want)
	}
}

func TestKube(t *testing.T) {
	var o kube.Options
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	Kube(fs, &o)
	if o.Namespace != kube.DefaultNamespace || o.PodStartTimeout != kube.DefaultPodStartTimeout || o.Image == "" {
		t.Errorf("defaults not set: %+v", o)
	}
	if err := fs.Parse([]string{"-n", "perf", "--keep", "--tolerations", "*", "--resources", "cpu=2,memory=1Gi",
		"--pod-start-timeout", "90s", "--server-node", "a", "--client-node", "b",
		"--server-namespace", "srv", "--client-namespace", "cli"}); err != nil {
		t.Fatal(err)
	}
	if o.Namespace != "perf" || o.ServerNamespace != "srv" || o.ClientNamespace != "cli" || !o.Keep || len(o.Tolerations) != 1 || len(o.Resources) != 2 ||
		o.PodStartTimeout != 90*time.Second || o.ServerNode != "a" || o.ClientNode != "b" {
		t.Errorf("flags not applied: %+v", o)
	}
}

// TestKubeVM: k8s-netperf's VM flags under its names; --vm alone is both endpoints, as k8s-netperf's.
func TestKubeVM(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want kube.Options
	}{
		{[]string{"--vm", "--vm-image", "g", "--sockets", "2", "--cores", "2", "--threads", "1"},
			kube.Options{VM: "both", VMImage: "g", VMSockets: 2, VMCores: 2, VMThreads: 1}},
		{[]string{"--vm=server", "--vm-binding", "bridge", "--vm-memory", "1Gi", "--vm-start-timeout", "3m"},
			kube.Options{VM: "server", VMBinding: "bridge", VMMemory: "1Gi", VMStartTimeout: 3 * time.Minute}},
		{nil, kube.Options{VMStartTimeout: kube.DefaultVMStartTimeout}},
		{[]string{"--vm", "--vm-image", "g", "--use-virtctl"}, kube.Options{VM: "both", VMImage: "g", VMUseVirtctl: true}},
	} {
		var o kube.Options
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		Kube(fs, &o)
		if err := fs.Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		got := kube.Options{VM: o.VM, VMImage: o.VMImage, VMBinding: o.VMBinding, VMSockets: o.VMSockets, VMCores: o.VMCores,
			VMThreads: o.VMThreads, VMMemory: o.VMMemory, VMStartTimeout: o.VMStartTimeout, VMUseVirtctl: o.VMUseVirtctl}
		if tt.want.VMStartTimeout == 0 {
			tt.want.VMStartTimeout = kube.DefaultVMStartTimeout
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%q: %+v, want %+v", tt.args, got, tt.want)
		}
	}
}

func TestTigerBench(t *testing.T) {
	var o tigerbench.Options
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	TigerBench(fs, &o)
	if o.Parallelism != tigerbench.DefaultParallelism || o.StandingTimeout != tigerbench.DefaultStandingTimeout ||
		o.TTFRResponseTimeout != tigerbench.DefaultTTFRResponseTimeout {
		t.Errorf("defaults not set: %+v", o)
	}
	if err := fs.Parse([]string{"--allow-cluster-changes", "--standing-parallelism", "5", "--ttfr-response-timeout", "2s"}); err != nil {
		t.Fatal(err)
	}
	if !o.AllowClusterChanges || o.Parallelism != 5 || o.TTFRResponseTimeout != 2*time.Second {
		t.Errorf("flags not applied: %+v", o)
	}
}

func TestEncodeData(t *testing.T) {
	v := []struct {
		Name  string `json:"name"`
		Count int    `json:"count,omitempty"`
	}{{Name: "a", Count: 2}, {Name: "b"}}
	for _, tc := range []struct{ format, want string }{
		{"json", "[\n  {\n    \"name\": \"a\",\n    \"count\": 2\n  },\n  {\n    \"name\": \"b\"\n  }\n]\n"},
		{"yaml", "- count: 2\n  name: a\n- name: b\n"},
	} {
		var b bytes.Buffer
		if err := EncodeData(&b, tc.format, v); err != nil {
			t.Fatal(err)
		}
		if b.String() != tc.want {
			t.Errorf("%s:\n%s\nwant:\n%s", tc.format, b.String(), tc.want)
		}
	}
	if err := EncodeData(io.Discard, "json", func() {}); err == nil {
		t.Error("a func encoded")
	}
}

func TestOutput(t *testing.T) {
	formats := []string{"table", "json", "yaml"}
	for _, tc := range []struct {
		value  string
		dryRun bool
		want   string
	}{
		{"json", false, ""},
		{"json", true, ""},
		{"yml", false, `unable to match a printer suitable for the output format "yml", allowed formats are: table,json,yaml (did you mean "yaml"?)`},
		{"xml", false, `unable to match a printer suitable for the output format "xml", allowed formats are: table,json,yaml`},
		{"", false, `unable to match a printer suitable for the output format "", allowed formats are: table,json,yaml`},
		{"YAML", false, `unable to match a printer suitable for the output format "YAML", allowed formats are: table,json,yaml`},
		{"csv", true, `unable to match a printer suitable for the output format "csv", allowed formats with --dry-run are: table,json,yaml`},
	} {
		check := Output
		if tc.dryRun {
			check = DryRunOutput
		}
		err := check(tc.value, formats)
		var u *exit.UsageError
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v", tc.value, err)
		case tc.want != "" && (!errors.As(err, &u) || err.Error() != tc.want):
			t.Errorf("%q: err = %v, want the usage error %q", tc.value, err, tc.want)
		}
	}
}

func TestRegression(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		on      bool
		percent float64
		bad     string // Check's error
	}{
		{nil, false, 0, ""},
		{[]string{"--fail-on-regression", "0"}, true, 0, ""},
		{[]string{"--fail-on-regression=7.5"}, true, 7.5, ""},
		{[]string{"--fail-on-regression", "-2"}, true, -2, "--fail-on-regression -2: want a percentage ≥ 0"},
		{[]string{"--fail-on-regression", "nan"}, true, math.NaN(), "--fail-on-regression NaN: want a percentage ≥ 0"},
	} {
		var r Regression
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		r.Bind(fs, "gate")
		if err := fs.Parse(tc.args); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if r.On != tc.on || (r.Percent != tc.percent && !math.IsNaN(tc.percent)) {
			t.Errorf("%v: %+v, want on=%v percent=%v", tc.args, r, tc.on, tc.percent)
		}
		err := r.Check()
		if (tc.bad == "") != (err == nil) || (err != nil && err.Error() != tc.bad) {
			t.Errorf("%v: Check() = %v, want %q", tc.args, err, tc.bad)
		}
	}
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	(&Regression{}).Bind(fs, "gate")
	if err := fs.Parse([]string{"--fail-on-regression", "ten"}); err == nil {
		t.Error("--fail-on-regression ten: parsed")
	}
	if u := fs.FlagUsages(); !strings.Contains(u, "--fail-on-regression float   gate") {
		t.Errorf("help: %q", u)
	}
}
