package kube

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
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
// error naming what it could not reach (RESTObjects: the resource of the path it was given), and
// RESTVMIs is not reachable.
func TestRESTStoresWithoutClient(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewSimpleClientset()
	if _, err := (RESTNADs{CS: cs}).Get(ctx, "ns", "x"); err == nil ||
		err.Error() != "no REST client to reach NetworkAttachmentDefinitions with" {
		t.Errorf("NAD get: %v", err)
	}
	if _, err := (RESTObjects{cs}).List(ctx, "/apis/g/v1/things", ""); err == nil ||
		err.Error() != "no REST client to reach things with" {
		t.Errorf("object list: %v", err)
	}
	for _, tt := range []struct{ path, want string }{
		{"/apis/g/v1/namespaces/ns/things/x", "things"},
		{"/apis/g/v1/namespaces/ns/things", "things"},
		{"/apis/g/v1/things/x", "things"},
		{"/api/v1/namespaces/ns/configmaps", "configmaps"},
		{"/apis/g/v1/namespaces", "namespaces"},
	} {
		if _, err := (RESTObjects{cs}).Get(ctx, tt.path); err == nil ||
			err.Error() != "no REST client to reach "+tt.want+" with" {
			t.Errorf("object get %s: %v, want it to name %s", tt.path, err, tt.want)
		}
	}
	if err := (RESTVMIs{CS: cs}).Delete(ctx, "ns", "x"); err == nil ||
		err.Error() != "no REST client to reach VirtualMachineInstances with" {
		t.Errorf("VMI delete: %v", err)
	}
	if (RESTVMIs{CS: cs}).reachable() {
		t.Error("RESTVMIs without a REST client is reachable")
	}
}

// TestRESTStoresSayTheAPIServersWords: when the API server refuses a request through RESTNADs,
// RESTVMIs or RESTObjects, the error is its Status's message (an admission webhook's, a schema
// validation's), not client-go's "the server rejected our request for an unknown reason", and
// still says what happened (AlreadyExists, NotFound, Forbidden); the callers' errors name the
// object and what cnperf was doing. The bodies are metav1.Status as the API server encodes them.
func TestRESTStoresSayTheAPIServersWords(t *testing.T) {
	ctx := context.Background()
	nadGR := schema.GroupResource{Group: NADGroup, Resource: NADResource}
	udnGR := schema.GroupResource{Group: "k8s.ovn.org", Resource: "userdefinednetworks"}
	// An admission webhook's denial (k8s.io/apiserver's webhook ToStatusErr: code 400, no reason).
	webhook := metav1.Status{Status: metav1.StatusFailure, Code: http.StatusBadRequest,
		Message: `admission webhook "nads.example.com" denied the request: spec.config: the CNI type "macvlan" is not allowed here`}
	invalid := apierrors.NewInvalid(schema.GroupKind{Group: "k8s.ovn.org", Kind: "UserDefinedNetwork"}, "net1",
		field.ErrorList{field.Required(field.NewPath("spec", "topology"), "")}).ErrStatus
	forbidden := apierrors.NewForbidden(nadGR, "net1", errors.New("no RBAC policy matched")).ErrStatus
	exists := apierrors.NewAlreadyExists(udnGR, "net1").ErrStatus
	gone := apierrors.NewNotFound(schema.GroupResource{Group: KubeVirtGroup, Resource: VMIResource}, "vm1").ErrStatus

	var answer metav1.Status
	var answerCode int // the HTTP code when the Status has none
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		answer.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"} // as the API server writes it
		body, err := json.Marshal(answer)
		if err != nil {
			t.Error(err)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(cmp.Or(int(answer.Code), answerCode))
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	nads, vmis, objs := RESTNADs{CS: cs}, RESTVMIs{CS: cs}, RESTObjects{cs}
	udn := NetworkObject{Group: "k8s.ovn.org", Version: "v1", Resource: "userdefinednetworks", Namespace: "ns",
		Object: map[string]any{"kind": "UserDefinedNetwork", "metadata": map[string]any{"name": "net1"}}}
	nad := &NetworkDefinition{Name: "net1", Config: `{"type":"macvlan"}`}
	ignore := func(error) bool { return true }

	tests := []struct {
		name   string
		answer metav1.Status
		code   int // the HTTP code, when not the Status's
		call   func() error
		want   string
		is     func(error) bool // what the error still says it is
	}{
		{"NAD create refused by a webhook", webhook, 0, func() error { return nads.Create(ctx, "ns", []byte(`{}`)) },
			webhook.Message, apierrors.IsBadRequest},
		{"CreateNetworkDefinition refused by a webhook", webhook, 0, func() error { return CreateNetworkDefinition(ctx, nads, "ns", "r1", nad) },
			"create NetworkAttachmentDefinition ns/net1: " + webhook.Message, apierrors.IsBadRequest},
		{"NAD get forbidden", forbidden, 0, func() error { _, err := nads.Get(ctx, "ns", "net1"); return err },
			forbidden.Message, apierrors.IsForbidden},
		{"NAD delete forbidden", forbidden, 0, func() error { return nads.Delete(ctx, "ns", "net1") },
			forbidden.Message, apierrors.IsForbidden},
		{"NAD list forbidden", forbidden, 0, func() error { _, err := nads.List(ctx, "ns", ""); return err },
			forbidden.Message, apierrors.IsForbidden},
		{"object create invalid", invalid, 0, func() error { return objs.Create(ctx, udn.Path(), []byte(`{}`)) },
			invalid.Message, apierrors.IsInvalid},
		{"CreateModeObjects invalid", invalid, 0, func() error { return CreateModeObjects(ctx, objs, []NetworkObject{udn}, func(NetworkObject) {}) },
			"create UserDefinedNetwork ns/net1: " + invalid.Message, ignore},
		{"CreateModeObjects exists already", exists, 0, func() error { return CreateModeObjects(ctx, objs, []NetworkObject{udn}, func(NetworkObject) {}) },
			"UserDefinedNetwork ns/net1 exists already and is not this run's (k8s-netperf's name; a run, or k8s-netperf, left it?): delete it first", ignore},
		{"object get forbidden", forbidden, 0, func() error { _, err := objs.Get(ctx, udn.ObjectPath()); return err },
			forbidden.Message, apierrors.IsForbidden},
		{"object delete gone", gone, 0, func() error { return objs.Delete(ctx, udn.ObjectPath()) },
			gone.Message, apierrors.IsNotFound},
		{"DeleteModeObjects forbidden", forbidden, 0, func() error { return DeleteModeObjects(ctx, objs, []NetworkObject{udn}) },
			"delete UserDefinedNetwork ns/net1: " + forbidden.Message, ignore},
		{"VMI create refused by a webhook", webhook, 0, func() error { return vmis.Create(ctx, "ns", []byte(`{}`), false) },
			webhook.Message, apierrors.IsBadRequest},
		{"VMI get gone", gone, 0, func() error { _, err := vmis.Get(ctx, "ns", "vm1"); return err },
			gone.Message, apierrors.IsNotFound},
		{"VMI delete forbidden", forbidden, 0, func() error { return vmis.Delete(ctx, "ns", "vm1") },
			forbidden.Message, apierrors.IsForbidden},
		// a Status without reason or code: the HTTP code's reason (409 to a POST: AlreadyExists)
		{"object create exists already, said tersely", metav1.Status{Message: `userdefinednetworks "net1" already exists`}, http.StatusConflict,
			func() error { return objs.Create(ctx, udn.Path(), []byte(`{}`)) }, `userdefinednetworks "net1" already exists`, apierrors.IsAlreadyExists},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			answer, answerCode = tt.answer, tt.code
			err := tt.call()
			if err == nil || err.Error() != tt.want || !tt.is(err) {
				t.Errorf("got %v\nwant %s", err, tt.want)
			}
		})
	}
}
