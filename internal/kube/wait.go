package kube

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/cnperf/cnperf/internal/version"
)

// Container waiting reasons that will not fix themselves within a run.
var fatalWaiting = map[string]bool{
	"ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true, "ErrImageNeverPull": true,
	"CreateContainerConfigError": true, "CreateContainerError": true, "RunContainerError": true,
	"CrashLoopBackOff": true, "PreCreateHookError": true, "PostStartHookError": true,
}

// HopelessWaiting says whether a container waiting as w (nil: not waiting) will not start
// within a run: its reason does not fix itself (fatalWaiting) and is not the one the kubelet
// retries by itself (transientWaiting).
func HopelessWaiting(w *corev1.ContainerStateWaiting) bool {
	return w != nil && fatalWaiting[w.Reason] && !transientWaiting(w)
}

// transientWaiting says whether a fatal-looking waiting state is one the kubelet retries by
// itself: its cache of the run's Secret (the agent token) not synced within its one-second
// wait, which a busy node reports as CreateContainerConfigError "failed to sync secret cache:
// timed out waiting for the condition" before a later sync creates the container.
func transientWaiting(w *corev1.ContainerStateWaiting) bool {
	return w.Reason == "CreateContainerConfigError" && strings.Contains(w.Message, "failed to sync ")
}

// Warning event reasons that mean a pod will not start; the value is how many times the
// event must be seen (sandbox creation is retried once: a CNI may still be starting).
var fatalEvents = map[string]int32{
	"FailedScheduling":       1,
	"FailedCreatePodSandBox": 2,
	"ErrImageNeverPull":      1,
	"InspectFailed":          1,
	"FailedMount":            3,
}

// podState is what WaitReady knows of one pod.
type podState struct {
	pod    *corev1.Pod
	events []*corev1.Event
	count  map[string]int32    // warning reason -> times seen
	seen   map[types.UID]int32 // event -> count already added
}

// StartError is endpoints that did not start, each with what Kubernetes said about it.
type StartError struct {
	Reason string   // "timeout", "failed", "cancelled"
	Pods   []string // one diagnosis per pod
	// Image is set when a pod could not get its image (pull error, invalid name, Never
	// policy without the image): the error then ends with how to make the image available.
	Image string
	// ImageInvalid: the runtime cannot even parse Image.
	ImageInvalid bool
}

func (e *StartError) Error() string {
	msg := fmt.Sprintf("endpoints did not start (%s):\n  %s", e.Reason, strings.Join(e.Pods, "\n  "))
	switch {
	case e.ImageInvalid:
		msg += fmt.Sprintf("\n%s is not a valid image reference: pass --image with a valid one (a lowercase repository; this cnperf's own is %s)", e.Image, version.DefaultImage())
	case e.Image != "":
		msg += "\n" + version.PullRemedy(e.Image)
	}
	return msg
}

// imageWaiting are the container waiting reasons of an image the node cannot get.
var imageWaiting = map[string]bool{
	"ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true, "ErrImageNeverPull": true,
}

// imageTrouble returns the image a pod could not get ("" when its trouble is another), and
// whether the runtime found its name invalid (InvalidImageName, or the kubelet's earlier
// InspectFailed event).
func imageTrouble(st *podState) (string, bool) {
	if st.pod == nil {
		return "", false
	}
	statuses := append(append([]corev1.ContainerStatus(nil), st.pod.Status.InitContainerStatuses...), st.pod.Status.ContainerStatuses...)
	for _, cs := range statuses {
		if w := cs.State.Waiting; w != nil && imageWaiting[w.Reason] {
			return specImage(st.pod, cs.Name, cs.Image), w.Reason == "InvalidImageName"
		}
	}
	for _, e := range st.events {
		if imageWaiting[e.Reason] || e.Reason == "InspectFailed" || (e.Reason == "Failed" && strings.Contains(e.Message, "pull")) {
			return specImage(st.pod, "", ""), e.Reason == "InspectFailed" || e.Reason == "InvalidImageName"
		}
	}
	return "", false
}

// specImage is the image the pod spec asks for in container name (any container when name
// is ""), else fallback.
func specImage(p *corev1.Pod, name, fallback string) string {
	for _, c := range append(append([]corev1.Container(nil), p.Spec.InitContainers...), p.Spec.Containers...) {
		if name == "" || c.Name == name {
			return c.Image
		}
	}
	return fallback
}

// WaitReady waits, with watches, until every named pod (of those selector selects in ns) is
// Running and Ready: the one readiness wait of the platform's endpoints and mesh's all-to-one
// server. It returns as soon as one of them cannot start (image pull, scheduling,
// sandbox/CNI failure, a server that exits) with a *StartError: the pod's conditions,
// container states and warning events.
func WaitReady(ctx context.Context, cs kubernetes.Interface, ns, selector string, names []string, timeout time.Duration) (map[string]*corev1.Pod, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	w := &readyWait{cs: cs, ns: ns, selector: selector, states: map[string]*podState{}}
	for _, n := range names {
		w.states[n] = &podState{count: map[string]int32{}, seen: map[types.UID]int32{}}
	}
	for {
		pods, evs, res, err := w.list(ctx)
		if err != nil || res != nil {
			return res, err
		}
		pw, err := cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{LabelSelector: selector, ResourceVersion: pods})
		if err != nil {
			if ctx.Err() != nil {
				return nil, waitEnded(ctx, w.fail)
			}
			return nil, fmt.Errorf("watch pods in %s: %w", ns, err)
		}
		ew, err := cs.CoreV1().Events(ns).Watch(ctx, metav1.ListOptions{
			FieldSelector: podEvents, ResourceVersion: evs})
		if err != nil {
			pw.Stop()
			if ctx.Err() != nil {
				return nil, waitEnded(ctx, w.fail)
			}
			return nil, fmt.Errorf("watch events in %s: %w", ns, err)
		}
		res, err = w.watch(ctx, pw, ew)
		if err != nil || res != nil {
			return res, err
		}
	}
}

// podEvents selects the events about pods.
var podEvents = fields.OneTermEqualSelector("involvedObject.kind", "Pod").String()

// readyWait is one WaitReady: the pods it waits for, by name.
type readyWait struct {
	cs           kubernetes.Interface
	ns, selector string
	states       map[string]*podState
}

// done reports whether every pod is there and Ready.
func (w *readyWait) done() bool {
	for _, st := range w.states {
		if st.pod == nil || !PodReady(st.pod) {
			return false
		}
	}
	return true
}

func (w *readyWait) result() map[string]*corev1.Pod {
	out := map[string]*corev1.Pod{}
	for n, st := range w.states {
		out[n] = st.pod
	}
	return out
}

// fail is the *StartError of pod only, or of every pod not Ready when only is "".
func (w *readyWait) fail(reason string, only string) error {
	e := &StartError{Reason: reason}
	for _, n := range slices.Sorted(maps.Keys(w.states)) {
		st := w.states[n]
		if only != "" && n != only {
			continue
		}
		if only == "" && st.pod != nil && PodReady(st.pod) {
			continue
		}
		e.Pods = append(e.Pods, diagnose(n, st))
		if img, invalid := imageTrouble(st); img != "" && e.Image == "" {
			e.Image, e.ImageInvalid = img, invalid
		}
	}
	return e
}

// list reads the pods and their events once: the pods when all are Ready, an error when one
// cannot start, else the resource versions to watch from.
func (w *readyWait) list(ctx context.Context) (podsVersion, eventsVersion string, res map[string]*corev1.Pod, err error) {
	pods, err := w.cs.CoreV1().Pods(w.ns).List(ctx, metav1.ListOptions{LabelSelector: w.selector})
	if err != nil {
		if ctx.Err() != nil {
			return "", "", nil, waitEnded(ctx, w.fail)
		}
		return "", "", nil, fmt.Errorf("list pods in %s: %w", w.ns, err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if st, ok := w.states[p.Name]; ok {
			st.pod = p
			if why := podFatal(p); why != "" {
				return "", "", nil, w.fail("failed", p.Name)
			}
		}
	}
	if w.done() {
		return "", "", w.result(), nil
	}
	evs, err := w.cs.CoreV1().Events(w.ns).List(ctx, metav1.ListOptions{FieldSelector: podEvents})
	if err != nil {
		if ctx.Err() != nil {
			return "", "", nil, waitEnded(ctx, w.fail)
		}
		return "", "", nil, fmt.Errorf("list events in %s: %w", w.ns, err)
	}
	for i := range evs.Items {
		if name := recordEvent(w.states, &evs.Items[i]); name != "" {
			return "", "", nil, w.fail("failed", name)
		}
	}
	return pods.ResourceVersion, evs.ResourceVersion, nil, nil
}

// watch follows the pods and their events until all are Ready (the pods), one cannot start
// or ctx ends (an error), or a watch ends (nil, nil: list and watch again).
func (w *readyWait) watch(ctx context.Context, pw, ew watch.Interface) (map[string]*corev1.Pod, error) {
	defer pw.Stop()
	defer ew.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, waitEnded(ctx, w.fail)
		case ev, ok := <-pw.ResultChan():
			if !ok {
				return nil, nil // re-list and re-watch
			}
			p, isPod := ev.Object.(*corev1.Pod)
			if !isPod {
				if ev.Type == watch.Error {
					return nil, nil
				}
				continue
			}
			st, mine := w.states[p.Name]
			if !mine {
				continue
			}
			st.pod = p
			if ev.Type == watch.Deleted {
				return nil, w.fail("deleted while starting", p.Name)
			}
			if why := podFatal(p); why != "" {
				return nil, w.fail("failed", p.Name)
			}
			if w.done() {
				return w.result(), nil
			}
		case ev, ok := <-ew.ResultChan():
			if !ok {
				return nil, nil
			}
			if e, isEvent := ev.Object.(*corev1.Event); isEvent {
				if name := recordEvent(w.states, e); name != "" {
					return nil, w.fail("failed", name)
				}
			}
		}
	}
}

func waitEnded(ctx context.Context, fail func(string, string) error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fail("timeout", "")
	}
	return fmt.Errorf("%w: %v", ctx.Err(), fail("cancelled", ""))
}

// recordEvent stores a warning event for its pod and returns the pod's name when the event
// means the pod will not start.
func recordEvent(states map[string]*podState, e *corev1.Event) string {
	st, ok := states[e.InvolvedObject.Name]
	if !ok || e.Type != corev1.EventTypeWarning {
		return ""
	}
	n := e.Count
	if n < 1 {
		n = 1
	}
	if e.Series != nil && e.Series.Count > n {
		n = e.Series.Count
	}
	// An event seen again (Count grew) is the same event: count only what is new.
	delta := n - st.seen[e.UID]
	if delta <= 0 {
		return ""
	}
	if st.seen[e.UID] > 0 {
		for i, old := range st.events {
			if old.UID == e.UID {
				st.events = append(st.events[:i], st.events[i+1:]...)
				break
			}
		}
	}
	st.seen[e.UID] = n
	st.events = append(st.events, e)
	st.count[e.Reason] += delta
	if need, fatal := fatalEvents[e.Reason]; fatal && st.count[e.Reason] >= need {
		if st.pod != nil && PodReady(st.pod) {
			return ""
		}
		return e.InvolvedObject.Name
	}
	return ""
}

// PodReady says whether a pod runs and is Ready.
func PodReady(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podFatal says why a pod will never become ready, or "".
func podFatal(p *corev1.Pod) string {
	if p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded {
		return "pod " + strings.ToLower(string(p.Status.Phase))
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return "unschedulable"
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; HopelessWaiting(w) {
			return w.Reason
		}
		if t := cs.State.Terminated; t != nil {
			return fmt.Sprintf("container %s exited", cs.Name)
		}
	}
	return ""
}

// diagnose describes a pod that did not start: phase, node, false conditions, container
// states and its warning events, most recent last.
func diagnose(name string, st *podState) string {
	var b strings.Builder
	b.WriteString("pod " + name)
	p := st.pod
	if p == nil {
		b.WriteString(": not seen yet")
	} else {
		if p.Spec.NodeName != "" {
			b.WriteString(" on node " + p.Spec.NodeName)
		}
		fmt.Fprintf(&b, ": phase %s", p.Status.Phase)
		for _, c := range p.Status.Conditions {
			if c.Status != corev1.ConditionTrue {
				fmt.Fprintf(&b, "; %s=%s", c.Type, c.Status)
				if c.Reason != "" {
					b.WriteString(" " + c.Reason)
				}
				if c.Message != "" {
					b.WriteString(": " + c.Message)
				}
			}
		}
		statuses := append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
		for _, cs := range statuses {
			switch {
			case cs.State.Waiting != nil && cs.State.Waiting.Reason != "":
				fmt.Fprintf(&b, "; container %s waiting: %s", cs.Name, cs.State.Waiting.Reason)
				if m := cs.State.Waiting.Message; m != "" {
					b.WriteString(": " + m)
				}
			case cs.State.Terminated != nil:
				t := cs.State.Terminated
				fmt.Fprintf(&b, "; container %s exited with code %d", cs.Name, t.ExitCode)
				if t.Reason != "" {
					b.WriteString(" (" + t.Reason + ")")
				}
				if m := strings.TrimSpace(t.Message); m != "" {
					b.WriteString(": " + m)
				}
			case cs.State.Running != nil && !cs.Ready:
				fmt.Fprintf(&b, "; container %s running, not ready", cs.Name)
			}
		}
	}
	evs := append([]*corev1.Event(nil), st.events...)
	sort.SliceStable(evs, func(i, j int) bool { return eventTime(evs[i]).Before(eventTime(evs[j])) })
	if len(evs) > 5 {
		evs = evs[len(evs)-5:]
	}
	for _, e := range evs {
		fmt.Fprintf(&b, "; event %s: %s", e.Reason, strings.TrimSpace(e.Message))
	}
	return b.String()
}

func eventTime(e *corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

// WaitLogLine follows a container's log until a line contains want (servers whose readiness
// is a message rather than an open TCP port).
func WaitLogLine(ctx context.Context, cs kubernetes.Interface, ns, pod, container, want string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	rc, err := cs.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Container: container, Follow: true}).Stream(ctx)
	if err != nil {
		return fmt.Errorf("follow log of %s/%s container %s: %w", ns, pod, container, err)
	}
	defer rc.Close()
	sc := bufio.NewScanner(rc)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var seen []string
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, want) {
			return nil
		}
		if len(seen) < 20 {
			seen = append(seen, line)
		}
	}
	if ctx.Err() != nil {
		return fmt.Errorf("server %s in pod %s/%s did not print %q within %s (log: %s)", container, ns, pod, want, timeout, strings.Join(seen, " | "))
	}
	return fmt.Errorf("server %s in pod %s/%s stopped before printing %q (log: %s)", container, ns, pod, want, strings.Join(seen, " | "))
}
