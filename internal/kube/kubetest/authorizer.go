// Package kubetest holds helpers for tests that run cnperf's Kubernetes code against
// client-go's fake clientset (no API server runs in unit tests).
package kubetest

import (
	"slices"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// Authorize makes the fake clientset answer SelfSubjectAccessReviews as an authorizer would:
// allowed unless "VERB RESOURCE[/SUBRESOURCE]" is one of deny. (The fake alone stores the review
// and answers every one "not allowed".) It returns cs.
func Authorize(cs *fake.Clientset, deny ...string) *fake.Clientset {
	cs.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		r := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview).DeepCopy()
		ra := r.Spec.ResourceAttributes
		key := ra.Verb + " " + ra.Resource
		if ra.Subresource != "" {
			key += "/" + ra.Subresource
		}
		r.Status.Allowed = !slices.Contains(deny, key)
		return true, r, nil
	})
	return cs
}
