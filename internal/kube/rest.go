package kube

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// restStore reaches API objects by path through the clientset's core REST client: the kinds
// cnperf creates that have no typed client here (RESTNADs, RESTVMIs, RESTObjects). An error the
// API server answers with carries its own words (statusOf).
type restStore struct {
	cs   kubernetes.Interface
	kind string // what it reaches, for the error when the clientset has no REST client ("": the path's resource)
}

// client is the clientset's REST client; the error without one names what path would reach.
func (s restStore) client(path string) (rest.Interface, error) {
	rc := s.cs.CoreV1().RESTClient()
	if rc == nil || reflect.ValueOf(rc).IsNil() {
		return nil, errors.New("no REST client to reach " + cmp.Or(s.kind, resourceOf(path)) + " with")
	}
	return rc, nil
}

// resourceOf is the resource an API path reaches: "things" of /apis/GROUP/VERSION/things,
// /apis/GROUP/VERSION/namespaces/NS/things/NAME and /api/VERSION/namespaces/NS/things.
func resourceOf(path string) string {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	skip := 3 // apis, group, version
	if segs[0] == "api" {
		skip = 2
	}
	if len(segs) <= skip {
		return path
	}
	rest := segs[skip:]
	if rest[0] == "namespaces" && len(rest) > 2 {
		return rest[2]
	}
	return rest[0]
}

// statusOf is err with the API server's own words when its body is a Status: DoRaw does not
// decode it, so a refusal would say only what its HTTP code means ("the server rejected our
// request for an unknown reason" for an admission webhook's 400). The Status's reason and code,
// when it has none, are the HTTP code's (apierrors.IsAlreadyExists, IsNotFound, IsForbidden
// still tell what happened).
func statusOf(raw []byte, err error) error {
	var st metav1.Status
	if err == nil || len(raw) == 0 || json.Unmarshal(raw, &st) != nil || st.Message == "" || strings.Contains(err.Error(), st.Message) {
		return err
	}
	if se := apierrors.APIStatus(nil); errors.As(err, &se) {
		st.Reason = cmp.Or(st.Reason, se.Status().Reason)
		st.Code = cmp.Or(st.Code, se.Status().Code)
	}
	return apierrors.FromObject(&st)
}

// get reads the object at path (the API's JSON).
func (s restStore) get(ctx context.Context, path string) ([]byte, error) {
	rc, err := s.client(path)
	if err != nil {
		return nil, err
	}
	raw, err := rc.Get().AbsPath(path).DoRaw(ctx)
	return raw, statusOf(raw, err)
}

// create posts body (JSON) to collection, with the query parameters params (name, value, ...).
func (s restStore) create(ctx context.Context, collection string, body []byte, params ...string) ([]byte, error) {
	rc, err := s.client(collection)
	if err != nil {
		return nil, err
	}
	req := rc.Post().AbsPath(collection).SetHeader("Content-Type", "application/json").Body(body)
	for i := 0; i+1 < len(params); i += 2 {
		req = req.Param(params[i], params[i+1])
	}
	raw, err := req.DoRaw(ctx)
	return raw, statusOf(raw, err)
}

// delete deletes the object at path.
func (s restStore) delete(ctx context.Context, path string) error {
	rc, err := s.client(path)
	if err != nil {
		return err
	}
	return statusOf(rc.Delete().AbsPath(path).DoRaw(ctx))
}

// list lists the objects of collection that selector selects (the API's JSON).
func (s restStore) list(ctx context.Context, collection, selector string) ([]byte, error) {
	rc, err := s.client(collection)
	if err != nil {
		return nil, err
	}
	raw, err := rc.Get().AbsPath(collection).Param("labelSelector", selector).DoRaw(ctx)
	return raw, statusOf(raw, err)
}

// listed is the items' metadata of a list list returned; none when the API does not serve the
// collection (its CRD is not installed: there can be none).
func listed(raw []byte, err error) ([]metav1.ObjectMeta, error) {
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return itemMetas(raw)
}

// itemMetas reads the items' metadata of a list the API returned (JSON: NetworkAttachmentDefinitions,
// VirtualMachineInstances, the network-mode objects).
func itemMetas(raw []byte) ([]metav1.ObjectMeta, error) {
	var l struct {
		Items []struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		} `json:"items"`
	}
	if err := json.Unmarshal(raw, &l); err != nil {
		return nil, fmt.Errorf("the API's list is not JSON: %w", err)
	}
	out := make([]metav1.ObjectMeta, 0, len(l.Items))
	for _, it := range l.Items {
		out = append(out, metav1.ObjectMeta{Name: it.Metadata.Name, Namespace: it.Metadata.Namespace, Labels: it.Metadata.Labels})
	}
	return out, nil
}
