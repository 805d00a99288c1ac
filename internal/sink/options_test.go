package sink

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestFlags(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("hunter2\n"), 0o600)
	tok := filepath.Join(dir, "tok")
	os.WriteFile(tok, []byte(" abc \n"), 0o600)

	var f Flags
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	f.AddFlags(fs)
	if err := fs.Parse([]string{"--opensearch", "https://os:9200", "--index", "perf", "--opensearch-username", "bob",
		"--opensearch-password-file", pw, "--prometheus", "https://prom:9090", "--prometheus-token-file", tok, "--insecure-skip-tls-verify"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := f.OpenSearch(nil)
	if err != nil || cfg.Password != "hunter2" || cfg.Username != "bob" || cfg.Index != "perf" || !cfg.InsecureSkipTLSVerify {
		t.Errorf("opensearch config = %+v, %v", cfg, err)
	}
	c, err := f.Prometheus(nil)
	if err != nil || c == nil || c.URL() != "https://prom:9090" {
		t.Errorf("prometheus = %v, %v", c, err)
	}

	var none Flags
	if cfg, err := none.OpenSearch(nil); cfg != nil || err != nil {
		t.Error("opensearch enabled without --opensearch")
	}
	if c, err := none.Prometheus(nil); c != nil || err != nil {
		t.Error("prometheus enabled without --prometheus")
	}
	bad := Flags{OpenSearchURL: "https://u:hunter2@os:9200", OpenSearchPasswordFile: pw}
	if _, err := bad.OpenSearch(nil); err == nil || !strings.Contains(err.Error(), "needs --opensearch-username") {
		t.Errorf("password file without user: %v", err)
	}
	bad = Flags{OpenSearchURL: "https://u:hunter2@os:9200", Index: "UPPER"}
	if _, err := bad.OpenSearch(nil); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("bad index: %v", err)
	}
}
