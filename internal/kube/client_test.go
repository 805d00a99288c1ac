package kube

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
)

const kubeconfigWithContext = `apiVersion: v1
kind: Config
clusters:
- name: c1
  cluster: {server: "https://10.0.0.1:6443"}
users:
- name: u1
  user: {token: abc}
contexts:
- name: ctx1
  context: {cluster: c1, user: u1}
current-context: ctx1
`

func TestDetect(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good", kubeconfigWithContext)
	noCtx := write("noctx", strings.Replace(kubeconfigWithContext, "current-context: ctx1\n", "", 1))
	badCtx := write("badctx", strings.Replace(kubeconfigWithContext, "current-context: ctx1", "current-context: gone", 1))
	tests := []struct {
		name       string
		kubeconfig string
		home       string
		ok         bool
		why        string
	}{
		{"KUBECONFIG with a context", good, dir, true, "(context ctx1)"},
		{"KUBECONFIG without current context", noCtx, dir, false, "has no current context"},
		{"KUBECONFIG naming an unknown context", badCtx, dir, false, `current context "gone" is not defined`},
		{"KUBECONFIG naming no file", filepath.Join(dir, "missing"), dir, false, "names no readable file"},
		{"nothing at all", "", dir, false, "no KUBECONFIG, ~/.kube/config or in-cluster service account"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", tt.kubeconfig)
			t.Setenv("HOME", tt.home)
			t.Setenv("KUBERNETES_SERVICE_HOST", "")
			ok, why := Detect()
			if ok != tt.ok || !strings.Contains(why, tt.why) {
				t.Errorf("Detect() = %v, %q; want %v and %q", ok, why, tt.ok, tt.why)
			}
		})
	}
	t.Run("~/.kube/config", func(t *testing.T) {
		home := t.TempDir()
		if err := os.MkdirAll(filepath.Join(home, ".kube"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, ".kube", "config"), []byte(kubeconfigWithContext), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv("KUBECONFIG", "")
		t.Setenv("HOME", home)
		if ok, why := Detect(); !ok || !strings.Contains(why, ".kube/config (context ctx1)") {
			t.Errorf("Detect() = %v, %q", ok, why)
		}
	})
}

func TestRESTConfigContext(t *testing.T) {
	p := filepath.Join(t.TempDir(), "kc")
	two := kubeconfigWithContext + `
`
	two = strings.Replace(two, "contexts:\n", "contexts:\n- name: ctx2\n  context: {cluster: c2, user: u1}\n", 1)
	two = strings.Replace(two, "clusters:\n", "clusters:\n- name: c2\n  cluster: {server: \"https://10.0.0.2:6443\"}\n", 1)
	if err := os.WriteFile(p, []byte(two), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := RESTConfig(p, "")
	if err != nil || cfg.Host != "https://10.0.0.1:6443" {
		t.Fatalf("current context: %v %v", cfg, err)
	}
	cfg, err = RESTConfig(p, "ctx2")
	if err != nil || cfg.Host != "https://10.0.0.2:6443" || cfg.QPS < 50 {
		t.Fatalf("--context ctx2: host %v qps %v err %v", cfg.Host, cfg.QPS, err)
	}
	if _, err := RESTConfig(p, "nope"); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("unknown context: %v", err)
	}
}

// client-go reports some errors only through klog (utilruntime.HandleError: "Unhandled
// Error … use of closed network connection" when an exec stream is cut): once cnperf has
// built a client configuration, such a line must not reach the terminal.
func TestRESTConfigSilencesClientGoLog(t *testing.T) {
	p := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(p, []byte(kubeconfigWithContext), 0o600); err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = w
	_, cerr := RESTConfig(p, "")
	utilruntime.HandleError(errors.New("read tcp 10.0.0.2:40000->10.0.0.1:6443: use of closed network connection"))
	klog.Flush()
	os.Stderr = stderr
	w.Close()
	out, _ := io.ReadAll(r)
	if cerr != nil {
		t.Fatal(cerr)
	}
	if len(out) != 0 {
		t.Errorf("client-go's log reached stderr: %q", out)
	}
}
