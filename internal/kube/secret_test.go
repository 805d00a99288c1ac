package kube

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

const testRun = "0b5c3e2a-1f0d-4c6b-9a51-0d7e3f2a9c11"

func TestTokenSecret(t *testing.T) {
	tok := strings.Repeat("ab", 32)
	owner := &metav1.OwnerReference{APIVersion: "coordination.k8s.io/v1", Kind: "Lease", Name: LeaseName(testRun), UID: "uid-1"}
	s := buildTokenSecret("cnperf", testRun, tok, owner)
	if s.Name != TokenSecretName(testRun) || s.Namespace != "cnperf" || string(s.Data[TokenSecretKey]) != tok {
		t.Errorf("secret %s/%s data %v", s.Namespace, s.Name, s.Data)
	}
	if s.Immutable == nil || !*s.Immutable || s.Type != corev1.SecretTypeOpaque {
		t.Errorf("immutable %v type %s", s.Immutable, s.Type)
	}
	if !reflect.DeepEqual(s.OwnerReferences, []metav1.OwnerReference{*owner}) {
		t.Errorf("owner %+v: the Secret must go with the run's Lease", s.OwnerReferences)
	}
	for k, v := range RunLabels(testRun) {
		if s.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, s.Labels[k], v)
		}
	}
	if errs := validation.IsDNS1123Subdomain(s.Name); len(errs) > 0 {
		t.Errorf("name %q: %v", s.Name, errs)
	}
}
