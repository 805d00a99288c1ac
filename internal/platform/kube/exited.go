package kube

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/text"
)

// A server the tool refuses (sockperf 3.7 has no IPv6: "sockperf: '-i' Invalid address: ::")
// exits before it is ready, and its pod never turns Ready. As on the lab, that fails the cases
// it serves, with its reason, and the run goes on: its container idles instead (the pod is
// made again), the driver's other servers (the other family's) still measure.

// exitedLogBytes is how much of an exited server's output, from its start, its cases' error
// carries (sockperf says what it refused on its first line, then prints its usage).
const exitedLogBytes = 2048

// exitedSettle is how long idleExitedServers looks for an exited server: the kubelet reports
// a container's exit a moment after its log stream ends (waitServerMessages sees that first).
const exitedSettle = 5 * time.Second

// idleExitedServers finds the server containers that exited in the server pods of specs,
// records in each spec why (Exited), and makes those pods again with the exited servers idle.
// It reports whether it found any; without any, the wait's error stands.
func (p *Platform) idleExitedServers(ctx context.Context, specs []endpointSpec) (bool, error) {
	deadline := time.Now().Add(exitedSettle)
	for {
		found, err := p.idleExitedOnce(ctx, specs)
		if found || err != nil || time.Now().After(deadline) {
			return found, err
		}
		select {
		case <-ctx.Done():
			return false, nil
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func (p *Platform) idleExitedOnce(ctx context.Context, specs []endpointSpec) (bool, error) {
	found := false
	ns := p.s.serverNamespace()
	for i := range specs {
		e := &specs[i]
		if e.Role != "server" || e.VM {
			continue
		}
		pod, err := p.cs.CoreV1().Pods(ns).Get(ctx, e.Name, metav1.GetOptions{})
		if err != nil {
			return false, fmt.Errorf("get pod %s/%s: %w", ns, e.Name, err)
		}
		exited := exitedServers(pod, e.Servers)
		if len(exited) == 0 {
			continue
		}
		found = true
		if e.Exited == nil {
			e.Exited = map[string]string{}
		}
		for _, srv := range exited {
			why := p.exitedWhy(ctx, pod, e.Driver, srv)
			e.Exited[srv.Name] = why
			p.logWrapped("warning: %s: its cases fail", text.OneLine(why, 160))
		}
		if err := p.remakePod(ctx, *e); err != nil {
			return false, err
		}
		for _, ep := range p.servers {
			if ep.spec.Name == e.Name {
				ep.spec.Exited = e.Exited
			}
		}
	}
	return found, nil
}

// exitedServers are the servers whose container in pod has exited.
func exitedServers(pod *corev1.Pod, servers []driver.Server) []driver.Server {
	var out []driver.Server
	for _, srv := range servers {
		for _, cs := range pod.Status.ContainerStatuses {
			if cs.Name == dnsLabel(srv.Name) && cs.State.Terminated != nil {
				out = append(out, srv)
			}
		}
	}
	return out
}

// exitedWhy says which server exited, the last lines it printed, its command, exit code and where.
func (p *Platform) exitedWhy(ctx context.Context, pod *corev1.Pod, drv string, srv driver.Server) string {
	code := ""
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == dnsLabel(srv.Name) && cs.State.Terminated != nil {
			code = fmt.Sprintf(", exit code %d", cs.State.Terminated.ExitCode)
		}
	}
	limit := int64(exitedLogBytes)
	out, err := p.cs.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{
		Container: dnsLabel(srv.Name), LimitBytes: &limit}).DoRaw(ctx)
	said := strings.Join(strings.Fields(string(out)), " ")
	switch {
	case err != nil:
		said = "its output could not be read: " + err.Error()
	case said == "":
		said = "it printed nothing"
	}
	// what it said first: a summary cuts the end
	return fmt.Sprintf("%s server %q exited before it was ready: %s (%s%s; pod %s on node %s)", drv, srv.Name,
		said, strings.Join(srv.Argv, " "), code, pod.Name, pod.Spec.NodeName)
}

// remakePod deletes e's pod, waits until it is gone and creates it again from e.
func (p *Platform) remakePod(ctx context.Context, e endpointSpec) error {
	ns := p.s.namespaceOf(e.Role)
	pods := p.cs.CoreV1().Pods(ns)
	// graceful (1 s): the pod is gone only once the kubelet has stopped its containers, so a
	// host-network server of the new pod finds its port free (with 0, the old pod's IPv4 sockperf
	// still held it: "Can`t bind socket ... Address already in use")
	if err := pods.Delete(ctx, e.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64(1))}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete pod %s/%s: %w", ns, e.Name, err)
	}
	gone := func(ctx context.Context) (bool, error) {
		_, err := pods.Get(ctx, e.Name, metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
			return false, fmt.Errorf("get pod %s/%s: %w", ns, e.Name, err)
		}
		return apierrors.IsNotFound(err), nil
	}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, p.s.PodStartTimeout, true, gone); err != nil {
		if wait.Interrupted(err) {
			return fmt.Errorf("pod %s/%s is not gone after %s: %w", ns, e.Name, p.s.PodStartTimeout, err)
		}
		return err
	}
	if _, err := pods.Create(ctx, buildPod(p.s, p.runID, e), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create pod %s/%s: %w", ns, e.Name, err)
	}
	return nil
}

// exitedCause is why c cannot be measured when one of the servers it needs exited before it
// was ready ("" otherwise).
func (p *Platform) exitedCause(c plan.Case, srv *endpoint) string {
	if len(srv.spec.Exited) == 0 {
		return ""
	}
	d := p.drivers[c.Driver]
	if d == nil {
		return ""
	}
	for _, s := range driver.Servers(d, []plan.Case{c}) {
		if why := srv.spec.Exited[s.Name]; why != "" {
			return why
		}
	}
	return ""
}
