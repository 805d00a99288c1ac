// Verdict harness for testdata/peers (not part of cnperf's build: testdata is ignored by go build).
// The reading code below is copied from k8s-netperf (github.com/cloud-bulldozer/k8s-netperf,
// pkg/config, fb9a2ec, Apache-2.0) and tiger-bench (github.com/projectcalico/tiger-bench,
// pkg/config, 101b2d6, Apache-2.0); only the I/O around it is new.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"

	validator "github.com/go-playground/validator/v10"
	"gopkg.in/yaml.v3"
	k8syaml "sigs.k8s.io/yaml"
)

// ---- k8s-netperf pkg/config (fb9a2ec) ----
type Config struct {
	Parallelism     int    `default:"1" yaml:"parallelism,omitempty"`
	Duration        int    `yaml:"duration,omitempty"`
	Profile         string `yaml:"profile,omitempty"`
	Samples         int    `yaml:"samples,omitempty"`
	MessageSize     int    `yaml:"messagesize,omitempty"`
	MessageReadSize int    `yaml:"messagereadsize,omitempty"`
	Burst           int    `yaml:"burst,omitempty"`
	Service         bool   `default:"false" yaml:"service,omitempty"`
	Metric          string
	AcrossAZ        bool
}

const validTests = "tcp_stream_lat|tcp_stream|udp_stream|tcp_rr|udp_rr|tcp_crr|udp_crr|sctp_stream|sctp_rr|sctp_crr"

func validConfig(cfg Config) (bool, error) {
	preEval := regexp.MustCompile("(?i)" + validTests)
	if !preEval.MatchString(cfg.Profile) {
		return false, fmt.Errorf("unknown netperf profile")
	}
	if cfg.Duration < 1 {
		return false, fmt.Errorf("duration must be > 0")
	}
	if cfg.Samples < 1 {
		return false, fmt.Errorf("samples must be > 0")
	}
	if cfg.MessageSize < 1 {
		return false, fmt.Errorf("messagesize must be > 0")
	}
	if cfg.Parallelism < 1 {
		return false, fmt.Errorf("parallelism must be > 0")
	}
	return true, nil
}

func parseConf(buf []byte) ([]Config, error) {
	c := make(map[string]Config)
	if err := yaml.Unmarshal(buf, &c); err != nil {
		return nil, err
	}
	var tests []Config
	for _, value := range c {
		if ok, err := validConfig(value); !ok {
			return nil, err
		}
		tests = append(tests, value)
	}
	return tests, nil
}

func parseV2Conf(buf []byte) ([]Config, error) {
	c := make(map[string][]Config)
	if err := yaml.Unmarshal(buf, &c); err != nil {
		return nil, err
	}
	var tests []Config
	for _, cf := range c {
		for _, cfg := range cf {
			if ok, err := validConfig(cfg); !ok {
				return nil, err
			}
			tests = append(tests, cfg)
		}
	}
	return tests, nil
}

// cmd/k8s-netperf: ParseConf, then ParseV2Conf on error.
func k8sNetperf(buf []byte) (any, error) {
	cfg, err := parseConf(buf)
	if err != nil {
		cfg, err = parseV2Conf(buf)
		if err != nil {
			return nil, err
		}
	}
	var out []string
	for _, c := range cfg {
		out = append(out, fmt.Sprintf("%s duration=%d samples=%d messagesize=%d parallelism=%d burst=%d service=%t",
			c.Profile, c.Duration, c.Samples, c.MessageSize, c.Parallelism, c.Burst, c.Service))
	}
	sort.Strings(out) // v1 is a Go map: no order
	return out, nil
}

// ---- tiger-bench pkg/config (101b2d6) ----
type TestConfig struct {
	TestKind            string `validate:"required,oneof=none dnsperf iperf thruput-latency ttfr"`
	Encap               string `validate:"omitempty,oneof=none vxlan ipip"`
	Dataplane           string `validate:"omitempty,oneof=iptables bpf nftables"`
	NumPolicies         int    `validate:"gte=0"`
	NumIdlePolicies     int    `default:"0" validate:"gte=0"`
	NumServices         int    `validate:"gte=0"`
	NumPods             int    `validate:"gte=0"`
	HostNetwork         bool
	TestNamespace       string      `default:"testns"`
	Iterations          int         `default:"1" validate:"gte=0"`
	Duration            int         `default:"60"`
	DNSPerf             *DNSConfig  `validate:"required_if=TestKind dnsperf"`
	Perf                *PerfConfig `validate:"required_if=TestType thruput-latency,required_if=TestType iperf"`
	TTFRConfig          *TTFRConfig `validate:"required_if=TestType ttfr"`
	CalicoNodeCPULimit  string
	LeaveStandingConfig bool
}

type PerfConfig struct {
	Direct, Service, External bool
	ControlPort, TestPort     int
	ExternalIPOrFQDN          string
}

type DNSConfig struct {
	NumDomains    int    `validate:"gte=0"`
	Mode          string `validate:"omitempty,oneof=Inline NoDelay DelayDeniedPacket DelayDNSResponse"`
	RunStress     bool   `default:"true" validate:"omitempty"`
	TestDNSPolicy bool   `default:"true" validate:"omitempty"`
	TargetURL     string `default:"http://www.example.com" validate:"omitempty,url"`
}

type TTFRConfig struct {
	TestPodsPerNode int     `validate:"gte=0"`
	Rate            float64 `validate:"gte=0"`
}

func tigerBench(buf []byte) (any, error) {
	var tcs []*TestConfig
	if err := k8syaml.Unmarshal(buf, &tcs); err != nil {
		return nil, err
	}
	if len(tcs) == 0 {
		return nil, fmt.Errorf("no test configs found in file")
	}
	validate := validator.New(validator.WithRequiredStructEnabled())
	for _, tcfg := range tcs {
		if err := validate.Struct(tcfg); err != nil {
			return nil, err
		}
		if tcfg.Duration == 0 {
			tcfg.Duration = 60
		}
		if tcfg.TestNamespace == "" {
			tcfg.TestNamespace = "testns"
		}
		if tcfg.TestKind == "dnsperf" {
			if tcfg.DNSPerf.TargetURL == "" {
				tcfg.DNSPerf.TargetURL = "http://www.example.com"
			}
			if tcfg.DNSPerf.NumDomains < 0 {
				return nil, fmt.Errorf("NumDomains must be non-negative for a dnsperf test")
			}
			if tcfg.DNSPerf.TestDNSPolicy && tcfg.DNSPerf.Mode == "" {
				return nil, fmt.Errorf("Mode must be set for a dnsperf test with TestDNSPolicy enabled")
			}
			if tcfg.Dataplane == "bpf" {
				if tcfg.DNSPerf.Mode == "DelayDeniedPacket" || tcfg.DNSPerf.Mode == "DelayDNSResponse" {
					return nil, fmt.Errorf("%s mode is not supported on BPF dataplane", tcfg.DNSPerf.Mode)
				}
			} else if tcfg.Dataplane == "nftables" && tcfg.DNSPerf.Mode == "Inline" {
				return nil, fmt.Errorf("Inline mode is not supported on Nftables dataplane")
			}
		}
		if tcfg.TestKind == "thruput-latency" || tcfg.TestKind == "iperf" {
			if tcfg.Perf == nil {
				tcfg.Perf = &PerfConfig{true, true, false, 32000, 32001, ""}
				continue
			}
			if tcfg.Perf.External {
				if tcfg.Perf.ExternalIPOrFQDN == "" {
					return nil, fmt.Errorf("ExternalIPOrFQDN is required for an external thruput-latency test")
				}
				if tcfg.TestKind == "thruput-latency" {
					if tcfg.Perf.ControlPort == 0 {
						return nil, fmt.Errorf("ControlPort is required for an external thruput-latency test")
					}
					if tcfg.Perf.ControlPort > 65535 || tcfg.Perf.ControlPort < 1 {
						return nil, fmt.Errorf("ControlPort must be between 1 and 65535")
					}
				}
				if tcfg.Perf.TestPort == 0 {
					return nil, fmt.Errorf("TestPort is required for an external thruput-latency test")
				}
				if tcfg.Perf.TestPort > 65535 || tcfg.Perf.TestPort < 1 {
					return nil, fmt.Errorf("TestPort must be between 1 and 65535")
				}
			}
		}
	}
	var out []string
	for _, t := range tcs {
		s := fmt.Sprintf("%s iterations=%d duration=%d hostNetwork=%t namespace=%s", t.TestKind, t.Iterations, t.Duration, t.HostNetwork, t.TestNamespace)
		if p := t.Perf; p != nil {
			s += fmt.Sprintf(" direct=%t service=%t external=%t", p.Direct, p.Service, p.External)
		}
		out = append(out, s)
	}
	return out, nil
}

func main() {
	tool := os.Args[1]
	for _, f := range os.Args[2:] {
		buf, err := os.ReadFile(f)
		if err != nil {
			panic(err)
		}
		var tests any
		if tool == "k8s-netperf" {
			tests, err = k8sNetperf(buf)
		} else {
			tests, err = tigerBench(buf)
		}
		v := map[string]any{"file": f, "verdict": "accept", "tests": tests}
		if err != nil {
			v = map[string]any{"file": f, "verdict": "reject", "error": err.Error()}
		}
		b, _ := json.Marshal(v)
		fmt.Println(string(b))
	}
}
