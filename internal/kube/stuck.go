package kube

import (
	"context"
	"fmt"
	"io"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// nodeLeaseNamespace holds the Lease every kubelet renews (its heartbeat).
const nodeLeaseNamespace = "kube-node-lease"

// stuckSlack is how long a deleted pod may outlive its grace period before its node's kubelet
// is asked about; stuckEvery is how often that is looked at (each look lists pods).
const (
	stuckSlack = 5 * time.Second
	stuckEvery = 2 * time.Second
)

// Unsticker finishes deletions a dead kubelet can never confirm. A pod being deleted goes
// away only when its node's kubelet has stopped its containers; when that kubelet has stopped
// (its node is not Ready, or it no longer renews its Lease), the pod, and the namespace
// around it, would wait for it forever. Unsticker force-deletes such pods once they are past
// their grace period, and says so: only pods already being deleted, on nodes whose kubelet is
// gone, so nothing is removed that was not already being removed. Their containers stop when
// the kubelet is back (it removes pods the API server no longer has).
type Unsticker struct {
	cs       kubernetes.Interface
	ns       string
	selector string // "" = every pod of ns (a namespace being deleted)
	log      io.Writer
	now      func() time.Time // the clock of this process
	last     time.Time        // last look
	// leases is what was seen of each node's Lease: its renew time and when this process
	// first saw that renew time. Silence is measured on this process's clock, so a skewed
	// cluster clock cannot make a live kubelet look dead.
	leases map[string]leaseSeen
	forced map[string]bool
}

type leaseSeen struct {
	renew     time.Time
	firstSeen time.Time
}

// writer is where u says what it does (nil for a nil u).
func (u *Unsticker) writer() io.Writer {
	if u == nil {
		return nil
	}
	return u.log
}

// NewUnsticker watches the pods of ns that match selector ("" = all) and logs to log what
// it forces.
func NewUnsticker(cs kubernetes.Interface, ns, selector string, log io.Writer) *Unsticker {
	return &Unsticker{cs: cs, ns: ns, selector: selector, log: log, now: time.Now,
		leases: map[string]leaseSeen{}, forced: map[string]bool{}}
}

// poll looks at most every stuckEvery; errors are ignored (the caller keeps waiting and
// reports its own timeout).
func (u *Unsticker) poll(ctx context.Context) {
	if u == nil || u.now().Sub(u.last) < stuckEvery {
		return
	}
	u.last = u.now()
	pods, err := u.cs.CoreV1().Pods(u.ns).List(ctx, metav1.ListOptions{LabelSelector: u.selector})
	if err != nil {
		return
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if pod.DeletionTimestamp == nil || pod.Spec.NodeName == "" || u.forced[pod.Name] {
			continue
		}
		// The node's Lease is watched from the first look (its silence is timed from then);
		// DeletionTimestamp is when the grace period ends.
		why := u.kubeletGone(ctx, pod.Spec.NodeName)
		over := u.now().Sub(pod.DeletionTimestamp.Time)
		if why == "" || over < stuckSlack {
			continue
		}
		zero := int64(0)
		if err := u.cs.CoreV1().Pods(u.ns).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			fmt.Fprintf(u.log, "kube: pod %s/%s on node %s is still terminating and %s; force-deleting it failed: %v\n",
				u.ns, pod.Name, pod.Spec.NodeName, why, err)
			continue
		}
		u.forced[pod.Name] = true
		fmt.Fprintf(u.log, "kube: pod %s/%s on node %s was still terminating %.0fs after its grace period and %s: force-deleted it (its containers stop when that kubelet is back)\n",
			u.ns, pod.Name, pod.Spec.NodeName, over.Seconds(), why)
	}
}

// kubeletGone says why the kubelet of node is gone, or "" when it seems alive.
func (u *Unsticker) kubeletGone(ctx context.Context, node string) string {
	n, err := u.cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return "" // cannot tell: keep waiting
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status != corev1.ConditionTrue {
			return fmt.Sprintf("node %s is not Ready (%s: %s)", node, c.Reason, c.Message)
		}
	}
	l, err := u.cs.CoordinationV1().Leases(nodeLeaseNamespace).Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	return u.leaseSilence(node, l)
}

// leaseSilence says "its kubelet has not renewed …" once the node's Lease has kept the same
// renew time for half its duration (two missed renewals at the kubelet's default of a
// quarter) of this process's own watching; "" before.
func (u *Unsticker) leaseSilence(node string, l *coordinationv1.Lease) string {
	if l.Spec.RenewTime == nil {
		return ""
	}
	renew := l.Spec.RenewTime.Time
	seen, ok := u.leases[node]
	if !ok || !seen.renew.Equal(renew) {
		u.leases[node] = leaseSeen{renew: renew, firstSeen: u.now()}
		return ""
	}
	limit := 20 * time.Second
	if l.Spec.LeaseDurationSeconds != nil && *l.Spec.LeaseDurationSeconds > 0 {
		limit = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second / 2
	}
	if silent := u.now().Sub(seen.firstSeen); silent >= limit {
		return fmt.Sprintf("its kubelet has not renewed its Lease %s/%s for %.0fs", nodeLeaseNamespace, node, silent.Seconds())
	}
	return ""
}
