package kube

import (
	"context"
	"errors"
	"strings"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/plan"
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

// TestPairErrors: what Pair refuses, each said with its cause: a platform not prepared or
// closed, a case whose server or Service Prepare did not make, and a family the server, the
// Service or the node has no address of.
func TestPairErrors(t *testing.T) {
	ipv6 := func(c plan.Case) plan.Case { c.Params.IPFamily = "ipv6"; return c }
	tests := []struct {
		name     string
		prepared []api.Path // nil: not prepared
		close    bool
		pair     plan.Case
		want     string
	}{
		{name: "not prepared", pair: casesWith([]string{"iperf3"}, []api.Path{api.PathPodPodSameNode})[0], want: "kube platform not prepared"},
		{name: "closed", prepared: []api.Path{api.PathPodPodSameNode}, close: true,
			pair: casesWith([]string{"iperf3"}, []api.Path{api.PathPodPodSameNode})[0], want: "kube platform closed"},
		{name: "no server for the driver", prepared: []api.Path{api.PathPodPodSameNode},
			pair: casesWith([]string{"netperf"}, []api.Path{api.PathPodPodSameNode})[0],
			want: "no pod-network server for driver netperf (was the case in the plan given to Prepare?)"},
		{name: "no host-network server", prepared: []api.Path{api.PathPodPodSameNode},
			pair: casesWith([]string{"iperf3"}, []api.Path{api.PathPodHost})[0], want: "no host-network server for driver iperf3"},
		{name: "no cross-node client", prepared: []api.Path{api.PathPodPodSameNode},
			pair: casesWith([]string{"iperf3"}, []api.Path{api.PathPodPodCrossNode})[0], want: "no pod-network client on the client-node"},
		{name: "no ClusterIP service", prepared: []api.Path{api.PathPodPodCrossNode},
			pair: casesWith([]string{"iperf3"}, []api.Path{api.PathPodClusterIP})[0], want: "no ClusterIP service for driver iperf3"},
		{name: "no NodePort service", prepared: []api.Path{api.PathPodPodCrossNode},
			pair: casesWith([]string{"iperf3"}, []api.Path{api.PathPodNodePort})[0], want: "no NodePort service for driver iperf3"},
		{name: "server without the family", prepared: []api.Path{api.PathPodPodSameNode},
			pair: ipv6(casesWith([]string{"iperf3"}, []api.Path{api.PathPodPodSameNode})[0]), want: "has no ipv6 address"},
		{name: "service without the family", prepared: []api.Path{api.PathPodClusterIP},
			pair: ipv6(casesWith([]string{"iperf3"}, []api.Path{api.PathPodClusterIP})[0]), want: "has no ipv6 cluster IP (cluster IPs: 10.96.0."},
		{name: "node without the family", prepared: []api.Path{api.PathPodNodePort},
			pair: ipv6(casesWith([]string{"iperf3"}, []api.Path{api.PathPodNodePort})[0]), want: "has no ipv6 internal address for the NodePort"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster(t, node("node1", ""), node("node2", ""))
			p := newTestPlatform(t, c, Options{})
			defer func() { _ = p.Close(context.Background()) }()
			if tt.prepared != nil {
				if err := p.Prepare(context.Background(), casesWith([]string{"iperf3"}, tt.prepared), testDrivers); err != nil {
					t.Fatal(err)
				}
			}
			if tt.close {
				if err := p.Close(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			_, err := p.Pair(context.Background(), tt.pair)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
		})
	}
}
