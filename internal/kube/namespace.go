package kube

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// NamespaceState is what CreateNamespace found or did.
type NamespaceState int

const (
	// NamespaceCreated means cnperf created it, so cnperf may delete it.
	NamespaceCreated NamespaceState = iota
	// NamespaceExisting means it was there; it is used as is and never deleted.
	NamespaceExisting
	// NamespaceAppeared means someone else created it between the look-up and the create; used
	// as is and never deleted.
	NamespaceAppeared
	// NamespaceTerminating means it is being deleted and takes no new objects.
	NamespaceTerminating
)

// CreateNamespace creates ns unless a namespace of its name exists, and says which happened.
// Only a namespace it created (NamespaceCreated) is cnperf's to delete. beforeCreate, when
// set, is called just before the create is sent (a create whose answer is lost may still
// have made the namespace).
func CreateNamespace(ctx context.Context, cs kubernetes.Interface, ns *corev1.Namespace, beforeCreate func()) (NamespaceState, error) {
	existing, err := cs.CoreV1().Namespaces().Get(ctx, ns.Name, metav1.GetOptions{})
	if err == nil {
		if existing.Status.Phase == corev1.NamespaceTerminating || existing.DeletionTimestamp != nil {
			return NamespaceTerminating, nil
		}
		return NamespaceExisting, nil
	}
	if !apierrors.IsNotFound(err) {
		return 0, fmt.Errorf("get namespace %s: %w", ns.Name, err)
	}
	if beforeCreate != nil {
		beforeCreate()
	}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return NamespaceAppeared, nil
		}
		return 0, fmt.Errorf("create namespace %s: %w", ns.Name, err)
	}
	return NamespaceCreated, nil
}

// BuildNamespace is a run's namespace: the run's labels and the Pod Security level its pods
// need (privileged for hostNetwork and privileged pods, else baseline).
func BuildNamespace(name, runID string, privileged bool) *corev1.Namespace {
	l := RunLabels(runID)
	level := "baseline"
	if privileged {
		level = "privileged"
	}
	l["pod-security.kubernetes.io/enforce"] = level
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}}
}
