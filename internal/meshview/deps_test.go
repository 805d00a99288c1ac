package meshview_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoKubernetesDependency keeps meshview importable by internal/report, which must not
// pull in client-go: that is why the rendering lives here and not in internal/mesh.
func TestNoKubernetesDependency(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command(goBin, "list", "-deps", "-f", "{{.ImportPath}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 2 {
		t.Fatalf("go list -deps printed %q", out)
	}
	for _, d := range deps {
		if strings.HasPrefix(d, "k8s.io/") || strings.HasPrefix(d, "sigs.k8s.io/") {
			t.Errorf("meshview depends on %s", d)
		}
	}
}
