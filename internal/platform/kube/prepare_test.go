package kube

import (
	"context"
	"errors"
	"strings"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
)

// TestPrepareErrors: what Prepare refuses before it creates anything (a second Prepare, a
// closed platform, a path it cannot make) and what the API server refuses while it creates
// the endpoints, each said with its cause.
func TestPrepareErrors(t *testing.T) {
	refuse := func(resource string) func(*cluster) {
		return func(c *cluster) {
			c.cs.PrependReactor("create", resource, func(k8stesting.Action) (bool, runtime.Object, error) {
				return true, nil, errors.New("exceeded quota")
			})
		}
	}
	tests := []struct {
		name   string
		path   api.Path
		before func(*testing.T, *Platform) // what happened to the platform before
		fault  func(*cluster)
		want   string
	}{
		{name: "prepared twice", path: api.PathPodPodSameNode, before: func(t *testing.T, p *Platform) {
			if err := p.Prepare(context.Background(), casesWith([]string{"iperf3"}, []api.Path{api.PathPodPodSameNode}), testDrivers); err != nil {
				t.Fatal(err)
			}
		}, want: "kube platform already prepared"},
		{name: "closed", path: api.PathPodPodSameNode, before: func(t *testing.T, p *Platform) {
			if err := p.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
		}, want: "kube platform already closed"},
		{name: "path it cannot make", path: api.PathLoopback, want: "case 1 (TCP_STREAM iperf3 loopback"},
		{name: "pod refused", path: api.PathPodPodSameNode, fault: refuse("pods"), want: "create pod cnperf/"},
		{name: "service refused", path: api.PathPodClusterIP, fault: refuse("services"), want: "create service cnperf/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster(t, node("node1", ""), node("node2", ""))
			if tt.fault != nil {
				tt.fault(c)
			}
			p := newTestPlatform(t, c, Options{})
			defer func() { _ = p.Close(context.Background()) }()
			if tt.before != nil {
				tt.before(t, p)
			}
			err := p.Prepare(context.Background(), casesWith([]string{"iperf3"}, []api.Path{tt.path}), testDrivers)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
			if tt.fault != nil && !strings.Contains(err.Error(), "exceeded quota") {
				t.Errorf("error %q lacks the API server's cause", err)
			}
		})
	}
}
