package kube

// CreateNamespace is tested against client-go's fake clientset: a unit test cannot run an API
// server, and what is under test is which state each answer of the API leads to (including a
// create that loses a race, which a real server cannot be made to do on demand). The real API
// server runs under it in test/e2e (TestKubeCleanupOwnership, TestMesh*, TestTigerBench*).

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

func TestCreateNamespace(t *testing.T) {
	const name = "cnperf-x"
	now := metav1.Now()
	nsResource := schema.GroupResource{Resource: "namespaces"}
	tests := []struct {
		name       string
		existing   *corev1.Namespace
		reactor    func(cs *fake.Clientset)
		want       NamespaceState
		wantErr    string
		wantCreate bool // beforeCreate called
	}{
		{name: "absent: created", want: NamespaceCreated, wantCreate: true},
		{name: "present: used as is", existing: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, want: NamespaceExisting},
		{name: "being deleted", existing: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name},
			Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}}, want: NamespaceTerminating},
		{name: "deletion requested, phase not yet terminating", existing: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name,
			DeletionTimestamp: &now, Finalizers: []string{"kubernetes"}}}, want: NamespaceTerminating},
		{name: "created by someone else meanwhile", want: NamespaceAppeared, wantCreate: true, reactor: func(cs *fake.Clientset) {
			cs.PrependReactor("create", "namespaces", func(k8stesting.Action) (bool, runtime.Object, error) {
				return true, nil, apierrors.NewAlreadyExists(nsResource, name)
			})
		}},
		{name: "get refused", wantErr: "get namespace cnperf-x: ", reactor: func(cs *fake.Clientset) {
			cs.PrependReactor("get", "namespaces", func(k8stesting.Action) (bool, runtime.Object, error) {
				return true, nil, apierrors.NewForbidden(nsResource, name, errors.New("no"))
			})
		}},
		{name: "create refused", wantErr: "create namespace cnperf-x: ", wantCreate: true, reactor: func(cs *fake.Clientset) {
			cs.PrependReactor("create", "namespaces", func(k8stesting.Action) (bool, runtime.Object, error) {
				return true, nil, apierrors.NewForbidden(nsResource, name, errors.New("no"))
			})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := fake.NewClientset()
			if tt.existing != nil {
				cs = fake.NewClientset(tt.existing)
			}
			if tt.reactor != nil {
				tt.reactor(cs)
			}
			called := false
			state, err := CreateNamespace(context.Background(), cs, BuildNamespace(name, "6f0d5a8e-1c1e", true), func() { called = true })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
			} else if err != nil || state != tt.want {
				t.Fatalf("state %d, error %v, want %d", state, err, tt.want)
			}
			if called != tt.wantCreate {
				t.Errorf("beforeCreate called %t, want %t", called, tt.wantCreate)
			}
			if tt.want == NamespaceCreated && tt.wantErr == "" {
				got, err := cs.CoreV1().Namespaces().Get(context.Background(), name, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if got.Labels[LabelRun] != "6f0d5a8e-1c1e" || got.Labels["pod-security.kubernetes.io/enforce"] != "privileged" {
					t.Errorf("labels %v", got.Labels)
				}
			}
		})
	}
}
