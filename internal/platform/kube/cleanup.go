package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// pollInterval is how often deletions are checked for completion.
const pollInterval = 250 * time.Millisecond

// DeleteNamespace deletes a namespace and, when wait is true, waits until it is gone (its
// pods have terminated).
func DeleteNamespace(ctx context.Context, cs kubernetes.Interface, name string, waitGone bool) error {
	bg := metav1.DeletePropagationBackground
	err := cs.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &bg})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("delete namespace %s: %w", name, err)
	}
	if !waitGone {
		return nil
	}
	err = wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("namespace %s is still terminating: %w", name, err)
	}
	return nil
}

// DeleteRunObjects deletes the DaemonSets, pods, Services and ServiceAccounts matching selector in
// namespace ns and, when wait is true, waits until the pods are gone.
func DeleteRunObjects(ctx context.Context, cs kubernetes.Interface, ns, selector string, waitGone bool) error {
	var errs []error
	grace := terminationGrace
	lo := metav1.ListOptions{LabelSelector: selector}
	// DaemonSets first (cnperf mesh's agents), or their controller recreates the pods below.
	dss, err := cs.AppsV1().DaemonSets(ns).List(ctx, lo)
	if err != nil && !apierrors.IsNotFound(err) {
		errs = append(errs, fmt.Errorf("list daemonsets in %s: %w", ns, err))
	}
	if dss != nil {
		for _, d := range dss.Items {
			if err := cs.AppsV1().DaemonSets(ns).Delete(ctx, d.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("delete daemonset %s/%s: %w", ns, d.Name, err))
			}
		}
	}
	pods, err := cs.CoreV1().Pods(ns).List(ctx, lo)
	if err != nil && !apierrors.IsNotFound(err) {
		errs = append(errs, fmt.Errorf("list pods in %s: %w", ns, err))
	}
	if pods != nil {
		for _, p := range pods.Items {
			if err := cs.CoreV1().Pods(ns).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &grace}); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("delete pod %s/%s: %w", ns, p.Name, err))
			}
		}
	}
	svcs, err := cs.CoreV1().Services(ns).List(ctx, lo)
	if err != nil && !apierrors.IsNotFound(err) {
		errs = append(errs, fmt.Errorf("list services in %s: %w", ns, err))
	}
	if svcs != nil {
		for _, s := range svcs.Items {
			if err := cs.CoreV1().Services(ns).Delete(ctx, s.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("delete service %s/%s: %w", ns, s.Name, err))
			}
		}
	}
	sas, err := cs.CoreV1().ServiceAccounts(ns).List(ctx, lo)
	if err != nil && !apierrors.IsNotFound(err) {
		errs = append(errs, fmt.Errorf("list service accounts in %s: %w", ns, err))
	}
	if sas != nil {
		for _, s := range sas.Items {
			if err := cs.CoreV1().ServiceAccounts(ns).Delete(ctx, s.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("delete service account %s/%s: %w", ns, s.Name, err))
			}
		}
	}
	if len(errs) > 0 || !waitGone {
		return errors.Join(errs...)
	}
	err = wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		left, err := cs.CoreV1().Pods(ns).List(ctx, lo)
		if err != nil {
			return false, nil
		}
		return len(left.Items) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("pods labelled %s in %s are still terminating: %w", selector, ns, err)
	}
	return nil
}

// CleanupOptions select what `cnperf cleanup` removes.
type CleanupOptions struct {
	// RunID limits the cleanup to one run; empty means every run.
	RunID string
	// Namespace limits the search to one namespace; empty means all namespaces.
	Namespace string
	// DryRun lists without deleting.
	DryRun bool
	// Wait waits until everything is gone.
	Wait bool
}

// Leftover is one thing cleanup found.
type Leftover struct {
	Kind      string // Namespace, Pod, Service, ServiceAccount
	Namespace string
	Name      string
	RunID     string
}

// Cleanup removes what cnperf runs left behind, found by label: namespaces cnperf created
// (with everything in them), and pods, Services and ServiceAccounts it put in namespaces it
// did not create. It never deletes a namespace that lacks cnperf's labels.
func Cleanup(ctx context.Context, cs kubernetes.Interface, o CleanupOptions, log io.Writer) ([]Leftover, error) {
	if log == nil {
		log = io.Discard
	}
	selector := ManagedSelector()
	if o.RunID != "" {
		selector = RunSelector(o.RunID)
	}
	lo := metav1.ListOptions{LabelSelector: selector}
	var found []Leftover
	var errs []error
	ownNS := map[string]bool{}

	nss, err := cs.CoreV1().Namespaces().List(ctx, lo)
	if err != nil {
		return nil, fmt.Errorf("list namespaces labelled %s: %w", selector, err)
	}
	for _, ns := range nss.Items {
		if o.Namespace != "" && ns.Name != o.Namespace {
			continue
		}
		ownNS[ns.Name] = true
		found = append(found, Leftover{Kind: "Namespace", Name: ns.Name, RunID: ns.Labels[LabelRun]})
	}
	scope := o.Namespace // "" = all namespaces
	add := func(kind string, items []metav1.ObjectMeta) {
		for _, m := range items {
			if ownNS[m.Namespace] {
				continue // goes with its namespace
			}
			found = append(found, Leftover{Kind: kind, Namespace: m.Namespace, Name: m.Name, RunID: m.Labels[LabelRun]})
		}
	}
	if pods, err := cs.CoreV1().Pods(scope).List(ctx, lo); err != nil {
		errs = append(errs, fmt.Errorf("list pods: %w", err))
	} else {
		add("Pod", metas(pods.Items, func(p corev1.Pod) metav1.ObjectMeta { return p.ObjectMeta }))
	}
	if svcs, err := cs.CoreV1().Services(scope).List(ctx, lo); err != nil {
		errs = append(errs, fmt.Errorf("list services: %w", err))
	} else {
		add("Service", metas(svcs.Items, func(s corev1.Service) metav1.ObjectMeta { return s.ObjectMeta }))
	}
	if sas, err := cs.CoreV1().ServiceAccounts(scope).List(ctx, lo); err != nil {
		errs = append(errs, fmt.Errorf("list service accounts: %w", err))
	} else {
		add("ServiceAccount", metas(sas.Items, func(s corev1.ServiceAccount) metav1.ObjectMeta { return s.ObjectMeta }))
	}
	if o.DryRun || len(found) == 0 {
		return found, errors.Join(errs...)
	}

	grace := terminationGrace
	nsTouched := map[string]bool{}
	for _, l := range found {
		var err error
		switch l.Kind {
		case "Namespace":
			fmt.Fprintf(log, "deleting namespace %s (run %s)\n", l.Name, l.RunID)
			err = DeleteNamespace(ctx, cs, l.Name, false)
		case "Pod":
			fmt.Fprintf(log, "deleting pod %s/%s (run %s)\n", l.Namespace, l.Name, l.RunID)
			err = cs.CoreV1().Pods(l.Namespace).Delete(ctx, l.Name, metav1.DeleteOptions{GracePeriodSeconds: &grace})
			nsTouched[l.Namespace] = true
		case "Service":
			fmt.Fprintf(log, "deleting service %s/%s (run %s)\n", l.Namespace, l.Name, l.RunID)
			err = cs.CoreV1().Services(l.Namespace).Delete(ctx, l.Name, metav1.DeleteOptions{})
		case "ServiceAccount":
			fmt.Fprintf(log, "deleting service account %s/%s (run %s)\n", l.Namespace, l.Name, l.RunID)
			err = cs.CoreV1().ServiceAccounts(l.Namespace).Delete(ctx, l.Name, metav1.DeleteOptions{})
		}
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete %s %s: %w", l.Kind, l.Name, err))
		}
	}
	if o.Wait && len(errs) == 0 {
		for _, l := range found {
			if l.Kind == "Namespace" {
				if err := DeleteNamespace(ctx, cs, l.Name, true); err != nil {
					errs = append(errs, err)
				}
			}
		}
		for _, ns := range sortedKeys(nsTouched) {
			if err := DeleteRunObjects(ctx, cs, ns, selector, true); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return found, errors.Join(errs...)
}

func metas[T any](items []T, f func(T) metav1.ObjectMeta) []metav1.ObjectMeta {
	out := make([]metav1.ObjectMeta, len(items))
	for i, it := range items {
		out[i] = f(it)
	}
	return out
}
