//go:build e2e

// The harness's API server calls out like a real one: to admission webhooks and aggregated APIs
// (KubeVirt's virt-api is both) behind a Service, at the Service's endpoints, with the
// aggregation layer's front-proxy client certificate; and it never sends a ClusterIP out of the
// machine by its network namespace's default route (test/e2e/harness/up.sh, docs/e2e.md).
package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// aggregationServer is an HTTPS server in the test process, on the API server's address (the
// root netns, where the API server runs): a validating webhook that denies every request it
// gets, and an aggregated API group that answers its discovery. It records what it was asked.
type aggregationServer struct {
	frontProxyCAs *x509.CertPool
	mu            sync.Mutex
	denied        []string // names of the objects the webhook denied
	proxied       []string // X-Remote-User of requests with a valid front-proxy client certificate
	unverified    []string // what came without one
}

func (s *aggregationServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/validate" {
		var review struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Request    struct {
				UID  string `json:"uid"`
				Name string `json:"name"`
			} `json:"request"`
		}
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.denied = append(s.denied, review.Request.Name)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"apiVersion": review.APIVersion, "kind": review.Kind,
			"response": map[string]any{"uid": review.Request.UID, "allowed": false,
				"status": map[string]any{"code": 403, "message": "denied by the cnperf e2e webhook"}},
		})
		return
	}
	// the aggregated API: only requests the API server proxies with its front-proxy certificate
	verified := false
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		_, err := r.TLS.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: s.frontProxyCAs,
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
		verified = err == nil && r.TLS.PeerCertificates[0].Subject.CommonName == "front-proxy-client"
	}
	s.mu.Lock()
	if verified {
		s.proxied = append(s.proxied, r.Header.Get("X-Remote-User"))
	} else {
		s.unverified = append(s.unverified, r.Method+" "+r.URL.Path)
	}
	s.mu.Unlock()
	if !verified {
		http.Error(w, "no front-proxy client certificate", http.StatusUnauthorized)
		return
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/") // apis/GROUP/VERSION
	if len(parts) != 3 || parts[0] != "apis" {
		http.NotFound(w, r) // /apis (aggregated discovery), /openapi/v2, /openapi/v3: not served
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"kind": "APIResourceList", "apiVersion": "v1",
		"groupVersion": parts[1] + "/" + parts[2], "resources": []any{}})
}

func (s *aggregationServer) snapshot() (denied, proxied, unverified []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.denied...), append([]string(nil), s.proxied...), append([]string(nil), s.unverified...)
}

// selfSignedServing returns a CA (PEM) and a serving certificate it signed for dnsName.
func selfSignedServing(t *testing.T, dnsName string) (caPEM []byte, cert tls.Certificate) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "cnperf-e2e-webhook-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: dnsName},
		DNSNames: []string{dnsName}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// TestClusterAggregationLayerAndWebhooks: the API server has the aggregation layer (the
// requestheader keys in kube-system/extension-apiserver-authentication), calls a webhook and an
// aggregated API behind a Service at the Service's endpoint (--enable-aggregator-routing: here a
// hand-made EndpointSlice naming this test's server), proxies to the aggregated API with its
// front-proxy client certificate and the user in X-Remote-User, and the root netns refuses the
// Service's ClusterIP at once ("unreachable" route) instead of sending it by its default route.
func TestClusterAggregationLayerAndWebhooks(t *testing.T) {
	c := clusterFromEnv(t)
	ctx := context.Background()

	// 1. the aggregation layer's configuration, as extension API servers read it
	out, err := c.run(ctx, "", "-n", "kube-system", "get", "configmap", "extension-apiserver-authentication", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		Data map[string]string `json:"data"`
	}
	if err := json.Unmarshal([]byte(out), &cm); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"requestheader-client-ca-file", "requestheader-allowed-names", "requestheader-username-headers"} {
		if cm.Data[k] == "" {
			t.Fatalf("extension-apiserver-authentication has no %s: the API server runs without the aggregation layer's flags (keys: %v)", k, slices.Sorted(maps.Keys(cm.Data)))
		}
	}
	frontProxyCAs := x509.NewCertPool()
	if !frontProxyCAs.AppendCertsFromPEM([]byte(cm.Data["requestheader-client-ca-file"])) {
		t.Fatal("requestheader-client-ca-file holds no PEM certificate")
	}

	// 2. the server, on the API server's own address (root netns)
	server, err := c.run(ctx, "", "config", "view", "--minify", "-o", "jsonpath={.clusters[0].cluster.server}")
	if err != nil {
		t.Fatal(err)
	}
	apiURL, err := url.Parse(server)
	if err != nil {
		t.Fatal(err)
	}
	ns := fmt.Sprintf("cnperf-e2e-aggr-%d", time.Now().UnixNano()%1000000)
	if p := os.Getenv("CNPERF_E2E_NAMESPACE_PREFIX"); p != "" { // a shared cluster's owner prefix
		ns = p + "-" + ns
	}
	svc := "aggr"
	caPEM, cert := selfSignedServing(t, svc+"."+ns+".svc")
	ln, err := net.Listen("tcp", net.JoinHostPort(apiURL.Hostname(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	srv := &aggregationServer{frontProxyCAs: frontProxyCAs}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequestClientCert, MinVersion: tls.VersionTLS12}}
	go func() { _ = hs.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { _ = hs.Close() })

	// 3. the objects; the cluster-scoped ones are removed first at cleanup (an APIService whose
	// server is gone breaks discovery for everyone)
	group := fmt.Sprintf("a%d.e2e.cnperf.io", time.Now().UnixNano()%1000000)
	apiService := "v1alpha1." + group
	webhook := ns + "-deny"
	t.Cleanup(func() {
		for _, args := range [][]string{
			{"delete", "apiservice", apiService, "--ignore-not-found"},
			{"delete", "validatingwebhookconfiguration", webhook, "--ignore-not-found"},
			{"delete", "namespace", ns, "--ignore-not-found", "--wait=false"},
		} {
			if _, err := c.run(context.Background(), "", args...); err != nil {
				t.Error(err)
			}
		}
	})
	bundle := caBundleYAML(caPEM)
	if _, err := c.run(ctx, fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata: {name: %[1]s, labels: {cnperf-e2e-webhook: %[1]s}}
---
apiVersion: v1
kind: Service
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  ports: [{name: https, port: 443, targetPort: %[3]d, protocol: TCP}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: %[2]s-test-process
  namespace: %[1]s
  labels: {kubernetes.io/service-name: %[2]s, endpointslice.kubernetes.io/managed-by: cnperf-e2e-test}
addressType: IPv4
ports: [{name: https, port: %[3]d, protocol: TCP}]
endpoints: [{addresses: ["%[4]s"], conditions: {ready: true}}]
`, ns, svc, port, apiURL.Hostname()), "apply", "-f", "-"); err != nil {
		t.Fatal(err)
	}
	clusterIP, err := c.run(ctx, "", "-n", ns, "get", "service", svc, "-o", "jsonpath={.spec.clusterIP}")
	if err != nil {
		t.Fatal(err)
	}

	// 4. the guard: this process runs in the API server's netns; the ClusterIP is refused here
	d := net.Dialer{Timeout: 5 * time.Second}
	if conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(clusterIP, "443")); err == nil {
		_ = conn.Close()
		t.Errorf("dialing the ClusterIP %s:443 from the API server's netns connected (to what? nothing here translates ClusterIPs): the Service CIDR must be an unreachable route there", clusterIP)
	} else if !errors.Is(err, syscall.EHOSTUNREACH) {
		t.Errorf("dialing the ClusterIP %s:443 from the API server's netns: %v; want %v (the unreachable route up.sh adds)", clusterIP, err, syscall.EHOSTUNREACH)
	}

	// 5. the webhook, scoped to this namespace only
	if _, err := c.run(ctx, fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: %[1]s}
webhooks:
- name: deny.e2e.cnperf.io
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Fail
  timeoutSeconds: 10
  namespaceSelector: {matchLabels: {cnperf-e2e-webhook: %[2]s}}
  rules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}]
  clientConfig:
    caBundle: %[3]s
    service: {namespace: %[2]s, name: %[4]s, port: 443, path: /validate}
`, webhook, ns, bundle, svc), "apply", "-f", "-"); err != nil {
		t.Fatal(err)
	}
	// a new webhook configuration takes effect a moment later: retry until it answers
	var lastErr error
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		_, lastErr = c.run(ctx, "", "-n", ns, "create", "configmap", "probe")
		if lastErr != nil && strings.Contains(lastErr.Error(), "denied by the cnperf e2e webhook") {
			break
		}
		if lastErr == nil { // not yet in force: remove it and try again
			_, _ = c.run(ctx, "", "-n", ns, "delete", "configmap", "probe")
		}
		time.Sleep(2 * time.Second)
	}
	if lastErr == nil || !strings.Contains(lastErr.Error(), "denied by the cnperf e2e webhook") {
		t.Errorf("creating a ConfigMap in %s: want the webhook's denial, got %v", ns, lastErr)
	}
	if denied, _, _ := srv.snapshot(); len(denied) == 0 || denied[len(denied)-1] != "probe" {
		t.Errorf("the webhook server saw %v, want a request for ConfigMap probe", denied)
	}

	// 6. the aggregated API
	if _, err := c.run(ctx, fmt.Sprintf(`apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: %[1]s}
spec:
  group: %[2]s
  version: v1alpha1
  groupPriorityMinimum: 100
  versionPriority: 10
  caBundle: %[3]s
  service: {namespace: %[4]s, name: %[5]s, port: 443}
`, apiService, group, bundle, ns, svc), "apply", "-f", "-"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.run(ctx, "", "wait", "apiservice", apiService, "--for=condition=Available", "--timeout=90s"); err != nil {
		status, _ := c.run(ctx, "", "get", "apiservice", apiService, "-o", "jsonpath={.status.conditions}")
		t.Fatalf("APIService %s not Available: %v\nconditions: %s", apiService, err, status)
	}
	body, err := c.run(ctx, "", "get", "--raw", "/apis/"+group+"/v1alpha1")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(body, `"groupVersion":"`+group+`/v1alpha1"`) {
		t.Errorf("GET /apis/%s/v1alpha1 through the API server: %s", group, body)
	}
	_, proxied, unverified := srv.snapshot()
	found := false
	for _, u := range proxied {
		found = found || u == "kubernetes-admin"
	}
	if !found {
		t.Errorf("the aggregated API saw no request for kubernetes-admin with the front-proxy certificate (users %q; without it: %q)", proxied, unverified)
	}
	t.Logf("webhook denied %v; aggregated API served %d proxied requests (users %v), refused %d without the front-proxy certificate; ClusterIP %s unreachable from the API server's netns",
		func() []string { d, _, _ := srv.snapshot(); return d }(), len(proxied), slices.Compact(slices.Sorted(slices.Values(proxied))), len(unverified), clusterIP)
}

// caBundleYAML: PEM as a caBundle field takes it (base64), quoted
func caBundleYAML(pemBytes []byte) string {
	out, _ := json.Marshal(pemBytes) // []byte marshals as base64
	return string(out)
}
