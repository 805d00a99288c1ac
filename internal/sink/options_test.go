package sink

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOptions(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte("hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tok := filepath.Join(dir, "tok")
	if err := os.WriteFile(tok, []byte(" abc \n"), 0o600); err != nil {
		t.Fatal(err)
	}

	f := Options{OpenSearchURL: "https://os:9200", Index: "perf", OpenSearchUsername: "bob",
		OpenSearchPasswordFile: pw, PrometheusURL: "https://prom:9090", PrometheusTokenFile: tok, InsecureSkipTLSVerify: true}
	cfg, err := f.OpenSearch(nil)
	if err != nil || cfg.Password != "hunter2" || cfg.Username != "bob" || cfg.Index != "perf" || !cfg.InsecureSkipTLSVerify {
		t.Errorf("opensearch config = %+v, %v", cfg, err)
	}
	c, err := f.Prometheus(nil)
	if err != nil || c == nil || c.URL() != "https://prom:9090" {
		t.Errorf("prometheus = %v, %v", c, err)
	}

	pg, err := (&Options{PushGatewayURL: "https://pg:9091", PushJob: "nightly", InsecureSkipTLSVerify: true}).PushGateway(nil)
	if err != nil || pg == nil || pg.URL != "https://pg:9091" || pg.Job != "nightly" || !pg.InsecureSkipTLSVerify {
		t.Errorf("pushgateway config = %+v, %v", pg, err)
	}
	var warn strings.Builder
	if _, err := (&Options{PushGatewayURL: "http://u:hunter2@pg:9091"}).PushGateway(&warn); err == nil ||
		strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "plain http") {
		t.Errorf("password over plain http: %v", err)
	}

	var none Options
	if cfg, err := none.PushGateway(nil); cfg != nil || err != nil {
		t.Error("pushgateway enabled without --push-gateway")
	}
	if cfg, err := none.OpenSearch(nil); cfg != nil || err != nil {
		t.Error("opensearch enabled without --opensearch")
	}
	if c, err := none.Prometheus(nil); c != nil || err != nil {
		t.Error("prometheus enabled without --prometheus")
	}
	bad := Options{OpenSearchURL: "https://u:hunter2@os:9200", OpenSearchPasswordFile: pw}
	if _, err := bad.OpenSearch(nil); err == nil || !strings.Contains(err.Error(), "needs --opensearch-username") {
		t.Errorf("password file without user: %v", err)
	}
	bad = Options{OpenSearchURL: "https://u:hunter2@os:9200", Index: "UPPER"}
	if _, err := bad.OpenSearch(nil); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("bad index: %v", err)
	}
}
