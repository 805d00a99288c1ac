package junit

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/report/reporttest"
)

// fixture is the tiger-bench encoder's fixture run (a testconfig.yaml run with every test kind,
// a partly failed case and a case that failed as a whole).
func fixture(t *testing.T) *api.Run {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "tigerbench", "testdata", "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var run api.Run
	if err := json.Unmarshal(b, &run); err != nil {
		t.Fatal(err)
	}
	return &run
}

func encode(t *testing.T, runs ...*api.Run) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Encode(&b, runs); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestGolden(t *testing.T) {
	reporttest.Golden(t, "run.xml", encode(t, fixture(t)))
}

func TestCountsAndCauses(t *testing.T) {
	run := fixture(t)
	interrupted := fixture(t)
	interrupted.UUID = "0b5e7a4c-93d1-4c4e-8f0e-5d2a1c9b7e33"
	interrupted.Interrupted = true
	interrupted.TigerBench = nil
	interrupted.Results = interrupted.Results[:1]
	out := encode(t, run, interrupted)

	var doc TestSuites
	if err := xml.Unmarshal(out, &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, out)
	}
	if len(doc.Suites) != 2 {
		t.Fatalf("%d suites, want one per run", len(doc.Suites))
	}
	s := doc.Suites[0]
	// 6 cases + standing config + Calico change + TTFR + DNS.
	if s.Tests != 10 || len(s.Cases) != 10 {
		t.Errorf("tests %d (cases %d), want 10", s.Tests, len(s.Cases))
	}
	// Failed: clusterip stream (1 of 2 samples), external (whole case), TTFR (1 pod), DNS (1 lookup).
	if s.Failures != 4 {
		t.Errorf("failures %d, want 4", s.Failures)
	}
	byName := map[string]TestCase{}
	for _, c := range s.Cases {
		byName[c.Name] = c
	}
	ext := byName["TCP_STREAM qperf external-service 64KiB x1"]
	if ext.Failure == nil || ext.Failure.Type != FailureCase || !strings.Contains(ext.Failure.Message, "connection refused") {
		t.Errorf("external case: %+v", ext.Failure)
	}
	svc := byName["TCP_STREAM qperf pod-clusterip 64KiB x1"]
	if svc.Failure == nil || svc.Failure.Type != FailureSamples || !strings.HasPrefix(svc.Failure.Message, "1 of 2 samples failed: qperf: failed to receive") {
		t.Errorf("clusterip case: %+v", svc.Failure)
	}
	var ttfr *TestCase
	for i, c := range s.Cases {
		if strings.Contains(c.Name, "time to first response") {
			ttfr = &s.Cases[i]
		}
	}
	if ttfr == nil || ttfr.Failure == nil || !strings.Contains(ttfr.Failure.Message, "1 of 6 pods got no response: 1× no response within 60s") {
		t.Errorf("ttfr case: %+v", ttfr)
	}
	if doc.Tests != 11 || doc.Failures != 4 {
		t.Errorf("totals: tests %d failures %d", doc.Tests, doc.Failures)
	}
	if doc.Suites[1].SystemErr == nil || !strings.Contains(doc.Suites[1].SystemErr.Text, "interrupted") {
		t.Errorf("interrupted run not said: %q", doc.Suites[1].SystemErr)
	}
	// Passing cases carry their figures for the CI log.
	pp := byName["TCP_STREAM qperf pod-pod-cross-node 64KiB x1"]
	if pp.Failure != nil || pp.SystemOut == nil || !strings.Contains(pp.SystemOut.Text, "throughput: 2.160 Gbit/s") {
		t.Errorf("pod-pod case: failure %+v out %q", pp.Failure, pp.SystemOut)
	}
}

func TestEmptyRunIsValidXML(t *testing.T) {
	out := encode(t, &api.Run{UUID: "x"})
	var doc TestSuites
	if err := xml.Unmarshal(out, &doc); err != nil || doc.Tests != 0 {
		t.Errorf("%v %+v", err, doc)
	}
}

// TestControlCharactersGiveValidXML: a tool's message with control characters and escape
// sequences (kept verbatim in the results file) becomes U+FFFD in the XML, which stays
// well-formed; the text around them is kept.
func TestControlCharactersGiveValidXML(t *testing.T) {
	run := fixture(t)
	hostile := "bad \x01\x1b[31mred\x1b[0m \x07 \x00 ]]> \xff end"
	r := &run.Results[0]
	r.Notes = append(r.Notes, hostile)
	r.Error = hostile
	if len(r.Samples) > 0 {
		r.Samples[0].Error = hostile
	}
	out := encode(t, run)
	for _, c := range []byte{0x00, 0x01, 0x07, 0x1b, 0xff} {
		if bytes.IndexByte(out, c) >= 0 {
			t.Errorf("output holds byte %#x", c)
		}
	}
	var doc TestSuites
	if err := xml.Unmarshal(out, &doc); err != nil {
		t.Fatalf("not well-formed: %v", err)
	}
	if !bytes.Contains(out, []byte("\uFFFD[31mred")) || !bytes.Contains(out, []byte("end")) {
		t.Errorf("the text around the control characters is lost:\n%s", out)
	}
}

func TestEncryptionProperties(t *testing.T) {
	for _, tt := range []struct {
		name string
		c    api.ClusterDetails
		want string
	}{
		{"WireGuard with node encryption", api.ClusterDetails{CNI: "Cilium", Encryption: "wireguard", NodeEncryption: true}, "cni=Cilium encryption=wireguard nodeEncryption=true"},
		{"none", api.ClusterDetails{CNI: "Calico", Encryption: "none"}, "cni=Calico encryption=none"},
		{"not known", api.ClusterDetails{CNI: "Flannel"}, "cni=Flannel"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.c
			var got []string
			for _, p := range properties(&api.Run{Cluster: &c}) {
				got = append(got, p.Name+"="+p.Value)
			}
			if strings.Join(got, " ") != tt.want {
				t.Errorf("properties %q, want %q", strings.Join(got, " "), tt.want)
			}
		})
	}
}
