package kube

import (
	"fmt"
	"sort"
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// PodMetadata is what the user adds to every pod cnperf creates (--pod-labels,
// --pod-annotations): a service mesh's sidecar switch, a team label, a cost centre.
type PodMetadata struct {
	Labels      map[string]string
	Annotations map[string]string
}

// ParsePodMetadata reads --pod-labels and --pod-annotations (kubectl's KEY=VALUE,KEY=VALUE
// form), checked with the Kubernetes validation rules (qualified-name keys, label values,
// the annotations' total size). cnperf's own keys (app.kubernetes.io/name and managed-by,
// cnperf.dev/...) are refused, naming the key: cnperf finds, selects and removes its objects
// by them.
func ParsePodMetadata(labels, annotations []string) (PodMetadata, error) {
	var m PodMetadata
	var err error
	if m.Labels, err = parseKeyValues("--pod-labels", labels, true); err != nil {
		return m, err
	}
	if m.Annotations, err = parseKeyValues("--pod-annotations", annotations, false); err != nil {
		return m, err
	}
	if errs := apivalidation.ValidateAnnotations(m.Annotations, field.NewPath("--pod-annotations")); len(errs) > 0 {
		return m, errs.ToAggregate()
	}
	return m, nil
}

func parseKeyValues(flag string, items []string, label bool) (map[string]string, error) {
	if len(items) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, it := range items {
		k, v, ok := strings.Cut(it, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("%s %q: want KEY=VALUE", flag, it)
		}
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return nil, fmt.Errorf("%s %q: key %q: %s", flag, it, k, strings.Join(errs, "; "))
		}
		if label {
			if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
				return nil, fmt.Errorf("%s %q: value %q: %s", flag, it, v, strings.Join(errs, "; "))
			}
		}
		if ownKey(k) {
			return nil, fmt.Errorf("%s %q: %s is cnperf's own key (it finds, selects and removes its objects by it); choose another", flag, it, k)
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("%s: key %s given twice", flag, k)
		}
		out[k] = v
	}
	return out, nil
}

// ownKey reports keys cnperf sets itself.
func ownKey(k string) bool {
	return k == LabelManagedBy || k == LabelName || strings.HasPrefix(k, "cnperf.dev/")
}

// String is the metadata as --dry-run shows it: "labels a=b,c=d; annotations e=f", "" when none.
func (m PodMetadata) String() string {
	join := func(kv map[string]string) string {
		keys := make([]string, 0, len(kv))
		for k := range kv {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for i, k := range keys {
			keys[i] = k + "=" + kv[k]
		}
		return strings.Join(keys, ",")
	}
	var parts []string
	if len(m.Labels) > 0 {
		parts = append(parts, "labels "+join(m.Labels))
	}
	if len(m.Annotations) > 0 {
		parts = append(parts, "annotations "+join(m.Annotations))
	}
	return strings.Join(parts, "; ")
}

// Apply adds the metadata to a pod's labels and annotations (each map created when nil);
// cnperf's own labels, already in labels, are kept (ParsePodMetadata refuses to override them).
func (m PodMetadata) Apply(labels, annotations map[string]string) (map[string]string, map[string]string) {
	for k, v := range m.Labels {
		if labels == nil {
			labels = map[string]string{}
		}
		if _, own := labels[k]; !own {
			labels[k] = v
		}
	}
	for k, v := range m.Annotations {
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[k] = v
	}
	return labels, annotations
}
