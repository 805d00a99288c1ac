package kube

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
)

// TestRESTStores: RESTNADs, RESTVMIs and RESTObjects through a REST client ask the API server
// for what they say (method, path, query, body), read a list's items' metadata, take a list the
// API does not serve (404) as none, and RESTVMIs gives a refused create in the API server's own
// words.
func TestRESTStores(t *testing.T) {
	ctx := context.Background()
	list := `{"items":[{"metadata":{"name":"a","namespace":"ns","labels":{"k":"v"},"uid":"u1"}}]}`
	refused := `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"admission webhook refused: ` +
		`spec.domain is invalid","reason":"Invalid","code":422}`
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got = append(got, strings.TrimSpace(fmt.Sprintf("%s %s %s %s", r.Method, r.URL.Path, r.URL.RawQuery, body)))
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.Contains(r.URL.Path, "/missing"):
			http.NotFound(w, r)
		case strings.HasSuffix(r.URL.Path, "/refused/"+VMIResource):
			w.WriteHeader(http.StatusUnprocessableEntity)
			_, _ = w.Write([]byte(refused))
		case r.Method == http.MethodGet && !strings.HasSuffix(r.URL.Path, "/x"):
			_, _ = w.Write([]byte(list))
		default:
			_, _ = w.Write([]byte(`{"metadata":{"name":"x"}}`))
		}
	}))
	defer srv.Close()
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	want := []metav1.ObjectMeta{{Name: "a", Namespace: "ns", Labels: map[string]string{"k": "v"}}}
	check := func(what string, metas []metav1.ObjectMeta, err error, want []metav1.ObjectMeta) {
		t.Helper()
		if err != nil || !reflect.DeepEqual(metas, want) {
			t.Errorf("%s: got %+v, %v; want %+v", what, metas, err, want)
		}
	}
	noErr := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}

	nads := RESTNADs{CS: cs}
	_, err = nads.Get(ctx, "ns", "x")
	noErr("NAD get", err)
	metas, err := nads.List(ctx, "ns", "k=v")
	check("NAD list", metas, err, want)
	metas, err = nads.List(ctx, "", "k=v")
	check("NAD list everywhere", metas, err, want)
	metas, err = nads.List(ctx, "missing", "k=v")
	check("NAD list without the CRD", metas, err, nil)
	noErr("NAD create", nads.Create(ctx, "ns", []byte(`{"n":1}`)))
	noErr("NAD delete", nads.Delete(ctx, "ns", "x"))

	vmis := RESTVMIs{CS: cs}
	if !vmis.reachable() {
		t.Error("RESTVMIs with a REST client is not reachable")
	}
	_, err = vmis.Get(ctx, "ns", "x")
	noErr("VMI get", err)
	metas, err = vmis.List(ctx, "ns", "k=v")
	check("VMI list", metas, err, want)
	metas, err = vmis.List(ctx, "missing", "")
	check("VMI list without KubeVirt", metas, err, nil)
	noErr("VMI create", vmis.Create(ctx, "ns", []byte(`{"v":1}`), false))
	noErr("VMI dry run", vmis.Create(ctx, "ns", []byte(`{"v":2}`), true))
	if err := vmis.Create(ctx, "refused", []byte(`{"v":3}`), false); err == nil ||
		err.Error() != "admission webhook refused: spec.domain is invalid" {
		t.Errorf("refused VMI create: got %v, want the API server's message", err)
	}
	noErr("VMI delete", vmis.Delete(ctx, "ns", "x"))

	objs := RESTObjects{cs}
	_, err = objs.Get(ctx, "/apis/g/v1/things/x")
	noErr("object get", err)
	metas, err = objs.List(ctx, "/apis/g/v1/things", "k=v")
	check("object list", metas, err, want)
	metas, err = objs.List(ctx, "/apis/g/v1/missing", "k=v")
	check("object list without the CRD", metas, err, nil)
	noErr("object create", objs.Create(ctx, "/apis/g/v1/things", []byte(`{"o":1}`)))
	noErr("object delete", objs.Delete(ctx, "/apis/g/v1/things/x"))

	wantReq := []string{
		"GET /apis/k8s.cni.cncf.io/v1/namespaces/ns/network-attachment-definitions/x",
		"GET /apis/k8s.cni.cncf.io/v1/namespaces/ns/network-attachment-definitions labelSelector=k%3Dv",
		"GET /apis/k8s.cni.cncf.io/v1/network-attachment-definitions labelSelector=k%3Dv",
		"GET /apis/k8s.cni.cncf.io/v1/namespaces/missing/network-attachment-definitions labelSelector=k%3Dv",
		`POST /apis/k8s.cni.cncf.io/v1/namespaces/ns/network-attachment-definitions  {"n":1}`,
		"DELETE /apis/k8s.cni.cncf.io/v1/namespaces/ns/network-attachment-definitions/x",
		"GET /apis/kubevirt.io/v1/namespaces/ns/virtualmachineinstances/x",
		"GET /apis/kubevirt.io/v1/namespaces/ns/virtualmachineinstances labelSelector=k%3Dv",
		"GET /apis/kubevirt.io/v1/namespaces/missing/virtualmachineinstances labelSelector=",
		`POST /apis/kubevirt.io/v1/namespaces/ns/virtualmachineinstances  {"v":1}`,
		`POST /apis/kubevirt.io/v1/namespaces/ns/virtualmachineinstances dryRun=All&fieldValidation=Strict {"v":2}`,
		`POST /apis/kubevirt.io/v1/namespaces/refused/virtualmachineinstances  {"v":3}`,
		"DELETE /apis/kubevirt.io/v1/namespaces/ns/virtualmachineinstances/x",
		"GET /apis/g/v1/things/x",
		"GET /apis/g/v1/things labelSelector=k%3Dv",
		"GET /apis/g/v1/missing labelSelector=k%3Dv",
		`POST /apis/g/v1/things  {"o":1}`,
		"DELETE /apis/g/v1/things/x",
	}
	if !reflect.DeepEqual(got, wantReq) {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantReq, "\n"))
	}
}

// TestRESTStoresWithoutClient: a clientset without a REST client (client-go's fake) gives an
// error naming what it could not reach, and RESTVMIs is not reachable.
func TestRESTStoresWithoutClient(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewSimpleClientset()
	if _, err := (RESTNADs{CS: cs}).Get(ctx, "ns", "x"); err == nil ||
		err.Error() != "no REST client to reach NetworkAttachmentDefinitions with" {
		t.Errorf("NAD get: %v", err)
	}
	if _, err := (RESTObjects{cs}).List(ctx, "/apis/g/v1/things", ""); err == nil ||
		err.Error() != "no REST client to reach NetworkAttachmentDefinitions with" {
		t.Errorf("object list: %v", err)
	}
	if err := (RESTVMIs{CS: cs}).Delete(ctx, "ns", "x"); err == nil ||
		err.Error() != "no REST client to reach VirtualMachineInstances with" {
		t.Errorf("VMI delete: %v", err)
	}
	if (RESTVMIs{CS: cs}).reachable() {
		t.Error("RESTVMIs without a REST client is reachable")
	}
}
