package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// restStore reaches API objects by path through the clientset's core REST client: the kinds
// cnperf creates that have no typed client here (RESTNADs, RESTVMIs, RESTObjects).
type restStore struct {
	cs   kubernetes.Interface
	kind string // what it reaches, for the error when the clientset has no REST client
}

func (s restStore) client() (rest.Interface, error) {
	rc := s.cs.CoreV1().RESTClient()
	if rc == nil || reflect.ValueOf(rc).IsNil() {
		return nil, errors.New("no REST client to reach " + s.kind + " with")
	}
	return rc, nil
}

// get reads the object at path (the API's JSON).
func (s restStore) get(ctx context.Context, path string) ([]byte, error) {
	rc, err := s.client()
	if err != nil {
		return nil, err
	}
	return rc.Get().AbsPath(path).DoRaw(ctx)
}

// create posts body (JSON) to collection, with the query parameters params (name, value, ...).
func (s restStore) create(ctx context.Context, collection string, body []byte, params ...string) ([]byte, error) {
	rc, err := s.client()
	if err != nil {
		return nil, err
	}
	req := rc.Post().AbsPath(collection).SetHeader("Content-Type", "application/json").Body(body)
	for i := 0; i+1 < len(params); i += 2 {
		req = req.Param(params[i], params[i+1])
	}
	return req.DoRaw(ctx)
}

// delete deletes the object at path.
func (s restStore) delete(ctx context.Context, path string) error {
	rc, err := s.client()
	if err != nil {
		return err
	}
	_, err = rc.Delete().AbsPath(path).DoRaw(ctx)
	return err
}

// list lists the objects of collection that selector selects (the API's JSON).
func (s restStore) list(ctx context.Context, collection, selector string) ([]byte, error) {
	rc, err := s.client()
	if err != nil {
		return nil, err
	}
	return rc.Get().AbsPath(collection).Param("labelSelector", selector).DoRaw(ctx)
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
	return nadMetas(raw)
}

// nadMetas reads the items' metadata of a NetworkAttachmentDefinitionList (JSON).
func nadMetas(raw []byte) ([]metav1.ObjectMeta, error) {
	var l struct {
		Items []struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		} `json:"items"`
	}
	if err := json.Unmarshal(raw, &l); err != nil {
		return nil, fmt.Errorf("the NetworkAttachmentDefinition list is not JSON: %w", err)
	}
	out := make([]metav1.ObjectMeta, 0, len(l.Items))
	for _, it := range l.Items {
		out = append(out, metav1.ObjectMeta{Name: it.Metadata.Name, Namespace: it.Metadata.Namespace, Labels: it.Metadata.Labels})
	}
	return out, nil
}
