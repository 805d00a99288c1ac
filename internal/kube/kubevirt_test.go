package kube

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// kubeVirtList is a list of the KubeVirt resource test/e2e/harness/kubevirt.sh applies (its spec), as the API
// serves it in a list (kubevirt.io/v1, KubeVirt v1.0.1's CRD: spec.configuration.
// developerConfiguration.featureGates, useEmulation; status.observedKubeVirtVersion).
func kubeVirtList(developerConfiguration string) string {
	return `{"apiVersion":"kubevirt.io/v1","kind":"KubeVirtList","metadata":{"resourceVersion":"4211"},"items":[` +
		`{"apiVersion":"kubevirt.io/v1","kind":"KubeVirt","metadata":{"name":"kubevirt","namespace":"kubevirt","generation":2},` +
		`"spec":{"certificateRotateStrategy":{},"configuration":{"developerConfiguration":` + developerConfiguration + `},` +
		`"imagePullPolicy":"IfNotPresent","infra":{"replicas":1},"workloadUpdateStrategy":{}},` +
		`"status":{"observedKubeVirtVersion":"v1.0.1","phase":"Deployed"}}]}`
}

// TestCheckKubeVirt: CheckKubeVirt through a REST client reads the KubeVirt resource's version,
// emulation and feature gates; a list it may not read (403) or a list without a KubeVirt
// leaves them unknown (Read false), and no kubevirt.io/v1 says KubeVirt is missing.
func TestCheckKubeVirt(t *testing.T) {
	discovery := `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"kubevirt.io/v1","resources":[` +
		`{"name":"kubevirts","singularName":"kubevirt","namespaced":true,"kind":"KubeVirt","verbs":["get","list"]},` +
		`{"name":"virtualmachineinstances","singularName":"virtualmachineinstance","namespaced":true,` +
		`"kind":"VirtualMachineInstance","verbs":["create","delete","get","list"]}]}`
	forbidden := `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"kubevirts.kubevirt.io is forbidden: ` +
		`User \"system:serviceaccount:cnperf:cnperf-runner\" cannot list resource \"kubevirts\" in API group \"kubevirt.io\" ` +
		`at the cluster scope","reason":"Forbidden","details":{"group":"kubevirt.io","kind":"kubevirts"},"code":403}`
	for _, tt := range []struct {
		name      string
		discovery string // "" for a 404
		code      int
		list      string
		want      VMSupport
	}{
		{"passt on", discovery, 200, kubeVirtList(`{"featureGates":["Root","Passt"],"useEmulation":true}`),
			VMSupport{Version: "v1.0.1", Emulated: true, Read: true, FeatureGates: []string{"Root", "Passt"}, Namespace: "kubevirt", Name: "kubevirt"}},
		{"no gates", discovery, 200, kubeVirtList(`{}`),
			VMSupport{Version: "v1.0.1", Read: true, Namespace: "kubevirt", Name: "kubevirt"}},
		{"forbidden", discovery, 403, forbidden, VMSupport{}},
		{"no KubeVirt resource", discovery, 200, `{"apiVersion":"kubevirt.io/v1","kind":"KubeVirtList","metadata":{},"items":[]}`, VMSupport{}},
		{"not installed", "", 200, "", VMSupport{Missing: "KubeVirt is not installed: the CRD virtualmachineinstances.kubevirt.io is missing " +
			"(the API server does not serve kubevirt.io/v1)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				switch {
				case r.URL.Path == "/apis/kubevirt.io/v1" && tt.discovery != "":
					_, _ = w.Write([]byte(tt.discovery))
				case r.URL.Path == "/apis/kubevirt.io/v1/kubevirts" && r.Method == http.MethodGet:
					w.WriteHeader(tt.code)
					_, _ = w.Write([]byte(tt.list))
				default:
					http.NotFound(w, r)
				}
			}))
			defer srv.Close()
			cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			if got := CheckKubeVirt(context.Background(), cs); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
