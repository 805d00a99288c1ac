package flags

import (
	"context"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/session"
	"github.com/cnperf/cnperf/internal/version"
)

// KubeTarget is where a command that runs its own pods works (mesh, programming): the cluster
// (--kubeconfig, --context), the namespace (--namespace) and the agent image (--image,
// --image-pull-policy).
type KubeTarget struct {
	Kubeconfig, Context, Namespace string
	Image, PullPolicy              string
}

// BindKubeTarget binds t's flags to fs; namespace is --namespace's default, and --namespace and
// --image have the command's own usage.
func BindKubeTarget(fs *pflag.FlagSet, t *KubeTarget, namespace, namespaceUsage, imageUsage string) {
	fs.StringVar(&t.Kubeconfig, "kubeconfig", "", "kubeconfig file (default $KUBECONFIG, ~/.kube/config, then in-cluster)")
	fs.StringVar(&t.Context, "context", "", "kubeconfig context (default: the current context)")
	fs.StringVarP(&t.Namespace, "namespace", "n", namespace, namespaceUsage)
	fs.StringVar(&t.Image, "image", version.DefaultImage(), imageUsage)
	fs.StringVar(&t.PullPolicy, "image-pull-policy", string(corev1.PullIfNotPresent), "image pull policy: IfNotPresent, Always or Never")
}

// Pull is --image-pull-policy; a bad one is a usage error.
func (t KubeTarget) Pull() (corev1.PullPolicy, error) {
	p, err := kube.ParsePullPolicy(t.PullPolicy)
	if err != nil {
		return "", exit.Usage("%v", err)
	}
	return p, nil
}

// KubeStart is what a command's Run starts from once its flags are valid.
type KubeStart[S any] struct {
	Ctx      context.Context // the command's, or context.Background()
	Settings S               // what the command's validate derived from its flags
	RunID    string          // --uuid, or a random UUID
	Client   kubernetes.Interface
	Config   *rest.Config
}

// StartKube is the start of Run for a command on t's cluster: validate (whose error it
// returns as it is), the run id of uuid, then a client; a kubeconfig it cannot use is a usage
// error. Nothing is touched in the cluster.
func StartKube[S any](ctx context.Context, t KubeTarget, uuid string, validate func() (S, error)) (*KubeStart[S], error) {
	s, err := validate()
	if err != nil {
		return nil, err
	}
	runID, err := session.RunID(uuid)
	if err != nil {
		return nil, err
	}
	cs, cfg, err := kube.NewClientset(t.Kubeconfig, t.Context)
	if err != nil {
		return nil, exit.Usage("%v", err)
	}
	return &KubeStart[S]{Ctx: ctx, Settings: s, RunID: runID, Client: cs, Config: cfg}, nil
}
