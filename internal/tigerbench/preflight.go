package tigerbench

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/cnperf/cnperf/internal/config"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/plan"
)

// Preflight asks the API server, with SelfSubjectAccessReviews and before anything is created,
// for every permission the tests need — standing config in each test namespace (and its
// removal unless leaveStandingConfig), the measurement's pods, Services and Lease, the TTFR and
// DNS pods — and, when a test reconfigures Calico, for deploy/rbac/calico.yaml's. It returns a
// *kube.MissingPermissionsError naming every missing permission and the manifest that grants it.
func Preflight(ctx context.Context, cs kubernetes.Interface, tests []config.TigerBenchTestConfig, byTest [][]plan.Case) error {
	var needs []kube.Access
	calico := false
	for i, t := range tests {
		ns := t.TestNamespace
		_, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		exists := !apierrors.IsNotFound(err) // forbidden: the check below names it
		needs = append(needs, kube.StandingAccess(ns, exists)...)
		if !t.LeaveStandingConfig {
			needs = append(needs, kube.StandingRemoveAccess(ns, !exists)...)
		}
		switch t.TestKind {
		case config.TigerBenchThruputLatency, config.TigerBenchIperf:
			if i < len(byTest) && len(byTest[i]) > 0 {
				// the standing config made the namespace by then
				needs = append(needs, kube.RunAccess(ns, true, usesService(byTest[i]))...)
			}
		case config.TigerBenchTTFR:
			needs = append(needs, kube.TestPodAccess(ns, false)...)
		case config.TigerBenchDNSPerf:
			needs = append(needs, kube.TestPodAccess(ns, true)...)
		}
		s := CalicoSettings{Encap: t.Encap, Dataplane: t.Dataplane, CPULimit: t.CalicoNodeCPULimit}
		calico = calico || !s.IsZero()
	}
	if err := kube.Preflight(ctx, cs, kube.TigerBenchManifest, needs); err != nil {
		return err
	}
	if calico {
		return kube.Preflight(ctx, cs, kube.CalicoManifest, kube.CalicoAccess())
	}
	return nil
}

// usesService reports whether a case goes through a ClusterIP or NodePort Service.
func usesService(cases []plan.Case) bool {
	for _, c := range cases {
		if row, _ := c.Path.Row(); row.Service() {
			return true
		}
	}
	return false
}

// ApplyPreflight checks, before anything is created, that the caller may apply standing
// config in ns (`cnperf load create`).
func ApplyPreflight(ctx context.Context, cs kubernetes.Interface, ns string) error {
	_, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	return kube.Preflight(ctx, cs, kube.TigerBenchManifest, kube.StandingAccess(ns, !apierrors.IsNotFound(err)))
}

// RemovePreflight checks, before anything is deleted, that the caller may remove the standing
// config of ns (`cnperf load remove`); deleteNamespace: the namespace goes too when cnperf
// created it.
func RemovePreflight(ctx context.Context, cs kubernetes.Interface, ns string, deleteNamespace bool) error {
	got, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil // nothing to remove: Remove says so
	}
	del := deleteNamespace && err == nil && got.Labels[LabelStandingNamespace] == "true"
	return kube.Preflight(ctx, cs, kube.TigerBenchManifest, kube.StandingRemoveAccess(ns, del))
}
