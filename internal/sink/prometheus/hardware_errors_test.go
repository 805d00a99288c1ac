package prometheus

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestNodeHardwareQueryErrors: when Prometheus answers node_uname_info but refuses the other
// queries (its "timeout" error, as a query over a large cluster can get), every figure left
// out says Prometheus's reason, not a collector that would be off.
func TestNodeHardwareQueryErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("query") == "node_uname_info" {
			_ = json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": map[string]any{"resultType": "vector",
				"result": []any{map[string]any{"metric": map[string]string{"instance": "10.0.0.1:9100", "nodename": "n1",
					"release": "6.1.0"}, "value": []any{1700000000.0, "1"}}}}})
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "error", "errorType": "timeout",
			"error": "query timed out in expression evaluation"})
	}))
	defer srv.Close()
	c, err := New(Config{URL: srv.URL, AllowPlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	hw, err := c.NodeHardware(context.Background(), map[string]string{"n1": "10.0.0.1"})
	if err != nil || hw["n1"] == nil {
		t.Fatalf("hardware %v, err %v", hw, err)
	}
	h := hw["n1"]
	if h.Kernel != "6.1.0" || h.CPUCount != 0 || h.CPUModel != "" || h.Uplink != "" {
		t.Errorf("read %+v", h)
	}
	for _, want := range []string{"CPU count: ", "CPU model: ", "uplink not identified: "} {
		if !strings.Contains(h.Note, want+"prometheus") || !strings.Contains(h.Note, "timeout: query timed out") {
			t.Errorf("note %q lacks %q with Prometheus's reason", h.Note, want)
		}
	}
	if strings.Contains(h.Note, "--collector.cpu.info") {
		t.Errorf("note %q blames a collector for Prometheus's error", h.Note)
	}
}
