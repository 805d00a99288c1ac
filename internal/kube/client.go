package kube

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/cnperf/cnperf/internal/version"
)

// inClusterTokenFile is where the in-cluster service account token lives.
const inClusterTokenFile = "/var/run/secrets/kubernetes.io/serviceaccount/token"

// Detect tells whether a cluster is configured (KUBECONFIG, ~/.kube/config or the in-cluster
// service account), without contacting it, so `cnperf run` can default to the Kubernetes
// platform or fall back to the local one. why says what was found or what was missing.
func Detect() (ok bool, why string) {
	if env := os.Getenv(clientcmd.RecommendedConfigPathEnvVar); env != "" {
		var found []string
		for _, p := range filepath.SplitList(env) {
			if st, err := os.Stat(p); err == nil && !st.IsDir() {
				found = append(found, p)
			}
		}
		if len(found) == 0 {
			return false, fmt.Sprintf("KUBECONFIG=%s names no readable file", env)
		}
		return checkKubeconfig("KUBECONFIG="+env, &clientcmd.ClientConfigLoadingRules{Precedence: found})
	}
	if home, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(home, clientcmd.RecommendedHomeDir, clientcmd.RecommendedFileName)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return checkKubeconfig(p, &clientcmd.ClientConfigLoadingRules{ExplicitPath: p})
		}
	}
	if os.Getenv("KUBERNETES_SERVICE_HOST") != "" && os.Getenv("KUBERNETES_SERVICE_PORT") != "" {
		if _, err := os.Stat(inClusterTokenFile); err == nil {
			return true, "in-cluster service account"
		}
	}
	return false, "no KUBECONFIG, ~/.kube/config or in-cluster service account"
}

func checkKubeconfig(where string, rules *clientcmd.ClientConfigLoadingRules) (bool, string) {
	raw, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).RawConfig()
	if err != nil {
		return false, fmt.Sprintf("%s: %v", where, err)
	}
	if raw.CurrentContext == "" {
		return false, fmt.Sprintf("%s has no current context", where)
	}
	if _, ok := raw.Contexts[raw.CurrentContext]; !ok {
		return false, fmt.Sprintf("%s: current context %q is not defined", where, raw.CurrentContext)
	}
	return true, fmt.Sprintf("%s (context %s)", where, raw.CurrentContext)
}

// RESTConfig builds the client configuration from a kubeconfig path and context (both
// optional): the explicit file, else $KUBECONFIG / ~/.kube/config, else in-cluster. Every
// client of cnperf starts here, so client-go's own logging is silenced here (quietClientGo).
func RESTConfig(kubeconfig, context string) (*rest.Config, error) {
	quietClientGo()
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfig != "" {
		rules.ExplicitPath = kubeconfig
	}
	overrides := &clientcmd.ConfigOverrides{CurrentContext: context}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
	if err != nil {
		if kubeconfig == "" && context == "" && clientcmd.IsEmptyConfig(err) {
			if ic, ierr := rest.InClusterConfig(); ierr == nil {
				cfg = ic
			} else {
				return nil, fmt.Errorf("no cluster configured: no kubeconfig (KUBECONFIG, ~/.kube/config) and not in a cluster (%v)", ierr)
			}
		} else {
			where := kubeconfig
			if where == "" {
				where = strings.Join(rules.Precedence, string(os.PathListSeparator))
			}
			return nil, fmt.Errorf("load kubeconfig %s: %w", where, err)
		}
	}
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "cnperf/" + version.Version
	// Endpoint set-up creates many objects at once; the client-side default (5 QPS) would
	// serialise it.
	if cfg.QPS == 0 {
		cfg.QPS = 50
	}
	if cfg.Burst == 0 {
		cfg.Burst = 100
	}
	return cfg, nil
}

// NewClientset returns a clientset and its config for the given kubeconfig and context.
func NewClientset(kubeconfig, context string) (kubernetes.Interface, *rest.Config, error) {
	cfg, err := RESTConfig(kubeconfig, context)
	if err != nil {
		return nil, nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("create Kubernetes client for %s: %w", cfg.Host, err)
	}
	return cs, cfg, nil
}

var quietOnce sync.Once

// quietClientGo stops client-go's klog lines (e.g. "Unhandled Error ... use of closed network
// connection" when an exec stream is cut on Ctrl-C, or the API server restarts) from mixing
// with cnperf's stderr; every error that matters reaches cnperf as a returned error.
// LogToStderr(false) and SetOutput alone are not enough: klog still copies ERROR lines to
// stderr (its stderrthreshold), which is where those lines came from; a discarding logger
// takes every line.
func quietClientGo() {
	quietOnce.Do(func() {
		klog.LogToStderr(false)
		klog.SetOutput(io.Discard)
		klog.SetLogger(logr.Discard())
	})
}
