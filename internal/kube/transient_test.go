package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// refused is what client-go returns while the API server is down: a url.Error around the
// dialer's *net.OpError around ECONNREFUSED.
func refused(host string) error {
	return &url.Error{Op: "Delete", URL: "https://" + host + "/api/v1/namespaces/ns", Err: &net.OpError{Op: "dial", Net: "tcp",
		Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}
}

func TestAPIRefused(t *testing.T) {
	const api = "10.123.0.1:6443"
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"dial refused", refused(api), true},
		{"dial refused, formatted", fmt.Errorf("error sending request: Get \"https://%s/api\": dial tcp %s: connect: connection refused", api, api), true},
		{"the kubelet refused (the API server answered)", errors.New("error dialing backend: dial tcp 10.123.0.12:10250: connect: connection refused"), false},
		{"stream cut", &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, false},
		{"other", errors.New("command terminated with exit code 1"), false},
	} {
		if got := apiRefused(tc.err, api); got != tc.want {
			t.Errorf("%s: apiRefused %v, want %v", tc.name, got, tc.want)
		}
	}
}

// Clean-up outlasts an API server restart: deletes refused while it is down are tried again.
func TestCleanupRetriesWhileAPIServerIsDown(t *testing.T) {
	defer func(d time.Duration) { apiRetryEvery = d }(apiRetryEvery)
	apiRetryEvery = 10 * time.Millisecond
	for _, tc := range []struct {
		name     string
		resource string
		run      func(ctx context.Context, cs *fake.Clientset) error
		failures int
		wantErr  bool
	}{
		{name: "namespace", resource: "namespaces", failures: 3,
			run: func(ctx context.Context, cs *fake.Clientset) error { return DeleteNamespace(ctx, cs, "ns", true) }},
		{name: "run objects", resource: "pods", failures: 3,
			run: func(ctx context.Context, cs *fake.Clientset) error {
				return DeleteRunObjects(ctx, cs, "ns", RunSelector("r1"), true)
			}},
		{name: "namespace, down for good", resource: "namespaces", failures: 1 << 30, wantErr: true,
			run: func(ctx context.Context, cs *fake.Clientset) error { return DeleteNamespace(ctx, cs, "ns", true) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := fake.NewSimpleClientset(
				&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}},
				&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: RunLabels("r1")}})
			calls := 0
			cs.PrependReactor("delete", tc.resource, func(k8stesting.Action) (bool, runtime.Object, error) {
				calls++
				if calls <= tc.failures {
					return true, nil, refused("10.123.0.1:6443")
				}
				return false, nil, nil
			})
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			err := tc.run(ctx, cs)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v after %d delete calls, want error %v", err, calls, tc.wantErr)
			}
			if !tc.wantErr && calls != tc.failures+1 {
				t.Errorf("%d delete calls, want %d", calls, tc.failures+1)
			}
		})
	}
}

// While clean-up retries an API server that does not answer, it says what it does, why and
// until when (issue 28 finding 3: two minutes of silence, even with -v).
func TestCleanupSaysWhileItRetries(t *testing.T) {
	defer func(d time.Duration) { apiRetryEvery = d }(apiRetryEvery)
	apiRetryEvery = 10 * time.Millisecond
	cs := fake.NewSimpleClientset(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}})
	calls := 0
	cs.PrependReactor("delete", "namespaces", func(k8stesting.Action) (bool, runtime.Object, error) {
		calls++
		if calls <= 5 {
			return true, nil, refused("10.123.0.1:6443")
		}
		return false, nil, nil
	})
	var log bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := DeleteNamespaceWith(ctx, cs, "ns", true, NewUnsticker(cs, "ns", "", &log)); err != nil {
		t.Fatal(err)
	}
	want := "kube: clean-up: delete namespace ns: the API server does not answer (Delete \"https://10.123.0.1:6443/api/v1/namespaces/ns\": " +
		"dial tcp: connect: connection refused); trying again every 10ms until it answers or 1m30s pass (a signal cuts it short)\n"
	if log.String() != want {
		t.Errorf("log:\n%q\nwant (once for 5 refusals within retryNoteEvery):\n%q", log.String(), want)
	}
}
