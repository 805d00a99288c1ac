package kubetest

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Objects keeps API objects in memory by path (a kube.ObjectStore), as the API server would, and
// records what was created and deleted. OnCreate, when set, runs after each create (a test's
// controller: it may add a definition, set a status).
type Objects struct {
	mu sync.Mutex
	// Objs are the objects by path (COLLECTION/NAME), their API JSON.
	Objs map[string][]byte
	// Created and Deleted are the paths created and deleted, in order.
	Created, Deleted []string
	// OnCreate runs after an object was stored at path.
	OnCreate func(path string, body []byte)
}

func notFound(p string) error {
	return apierrors.NewNotFound(schema.GroupResource{Resource: path.Base(path.Dir(p))}, path.Base(p))
}

// Create stores body under collection/metadata.name.
func (m *Objects) Create(_ context.Context, collection string, body []byte) error {
	var obj struct {
		Metadata struct{ Name string } `json:"metadata"`
	}
	if err := json.Unmarshal(body, &obj); err != nil {
		return err
	}
	p := collection + "/" + obj.Metadata.Name
	m.mu.Lock()
	if _, ok := m.Objs[p]; ok {
		m.mu.Unlock()
		return apierrors.NewAlreadyExists(schema.GroupResource{Resource: path.Base(collection)}, obj.Metadata.Name)
	}
	if m.Objs == nil {
		m.Objs = map[string][]byte{}
	}
	m.Objs[p] = body
	m.Created = append(m.Created, p)
	hook := m.OnCreate
	m.mu.Unlock()
	if hook != nil {
		hook(p, body)
	}
	return nil
}

// Get reads the object at p.
func (m *Objects) Get(_ context.Context, p string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if b, ok := m.Objs[p]; ok {
		return b, nil
	}
	return nil, notFound(p)
}

// Set replaces the object at p (a controller's status update).
func (m *Objects) Set(p string, body []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.Objs == nil {
		m.Objs = map[string][]byte{}
	}
	m.Objs[p] = body
}

// Delete deletes the object at p.
func (m *Objects) Delete(_ context.Context, p string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.Objs[p]; !ok {
		return notFound(p)
	}
	delete(m.Objs, p)
	m.Deleted = append(m.Deleted, p)
	return nil
}

// List lists the objects stored under collection that selector selects.
func (m *Objects) List(_ context.Context, collection, selector string) ([]metav1.ObjectMeta, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return selectMetas(m.Objs, selector, func(p string, _ metav1.ObjectMeta) bool { return inCollection(p, collection) })
}

// selectMetas are the metadata (name, namespace, labels) of the stored objects, in key order,
// that keep accepts and selector selects: the List of every fake that stores objects as JSON.
func selectMetas(objs map[string][]byte, selector string, keep func(key string, md metav1.ObjectMeta) bool) ([]metav1.ObjectMeta, error) {
	sel, err := labels.Parse(selector)
	if err != nil {
		return nil, err
	}
	var out []metav1.ObjectMeta
	for _, key := range slices.Sorted(maps.Keys(objs)) {
		var obj struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		}
		if err := json.Unmarshal(objs[key], &obj); err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		md := obj.Metadata
		if keep(key, md) && sel.Matches(labels.Set(md.Labels)) {
			out = append(out, metav1.ObjectMeta{Name: md.Name, Namespace: md.Namespace, Labels: md.Labels})
		}
	}
	return out, nil
}

// inCollection says whether the object at p is in collection: directly, or, for a namespaced
// resource's collection across namespaces (/apis/G/V/R), in any namespace's (/apis/G/V/namespaces/NS/R).
func inCollection(p, collection string) bool {
	dir := path.Dir(p)
	if dir == collection {
		return true
	}
	c, d := strings.Split(collection, "/"), strings.Split(dir, "/")
	return len(c) == 5 && len(d) == 7 && d[4] == "namespaces" && slices.Equal(d[:4], c[:4]) && d[6] == c[4]
}
