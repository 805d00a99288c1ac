package kube

import (
	"context"
	"fmt"

	"github.com/cnperf/cnperf/internal/agenttoken"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// The run's agent token reaches the pods through a Secret in the run's namespace: the pod
// spec only names it (env valueFrom secretKeyRef), so `kubectl get pod -o yaml` — and whoever
// may read pods, DaemonSets or events — never sees the token, and it is never on a command
// line. The Secret is owned by the run's Lease, so the garbage collector removes it with the
// Lease when the run is cleaned up by `cnperf cleanup` (which never lists Secrets); a run
// deletes it itself at the end.

// TokenSecretKey is the key of the token in the Secret.
const TokenSecretKey = "token"

// TokenSecretName is the name of a run's token Secret.
func TokenSecretName(runID string) string { return "cnperf-token-" + ShortID(runID) }

// buildTokenSecret is the Secret holding the run's token, owned by its Lease (when known).
func buildTokenSecret(ns, runID, token string, owner *metav1.OwnerReference) *corev1.Secret {
	immutable := true
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: TokenSecretName(runID), Namespace: ns, Labels: RunLabels(runID)},
		Type:       corev1.SecretTypeOpaque,
		Immutable:  &immutable,
		Data:       map[string][]byte{TokenSecretKey: []byte(token)},
	}
	if owner != nil {
		s.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	return s
}

// CreateTokenSecret creates the Secret that hands the run's agent token to its pods (see
// TokenEnvVar), owned by lease so that it goes with it.
func CreateTokenSecret(ctx context.Context, cs kubernetes.Interface, ns, runID, token string, lease *Lease) error {
	s := buildTokenSecret(ns, runID, token, lease.OwnerReference())
	if _, err := cs.CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create secret %s/%s (the run's agent token): %w", ns, s.Name, err)
	}
	return nil
}

// DeleteTokenSecret deletes the run's token Secret (by name: no right to list Secrets is
// needed); one already gone is no error.
func DeleteTokenSecret(ctx context.Context, cs kubernetes.Interface, ns, runID string) error {
	err := cs.CoreV1().Secrets(ns).Delete(ctx, TokenSecretName(runID), metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete secret %s/%s: %w", ns, TokenSecretName(runID), err)
	}
	return nil
}

// TokenEnvVar is the environment variable that gives a container the run's token from its
// Secret: the pod spec names the Secret, never the token.
func TokenEnvVar(runID string) corev1.EnvVar {
	return corev1.EnvVar{Name: agenttoken.Env, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: TokenSecretName(runID)}, Key: TokenSecretKey}}}
}
