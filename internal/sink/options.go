// Package sink holds the command-line options shared by the result sinks (OpenSearch,
// Prometheus) so that a command registers them once.
package sink

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/cnperf/cnperf/internal/sink/httpclient"
	"github.com/cnperf/cnperf/internal/sink/opensearch"
	"github.com/cnperf/cnperf/internal/sink/prometheus"
)

// Flags are the sinks' options.
type Flags struct {
	OpenSearchURL          string
	Index                  string
	OpenSearchUsername     string
	OpenSearchPasswordFile string
	PrometheusURL          string
	PrometheusTokenFile    string
	InsecureSkipTLSVerify  bool
	CAFile                 string
	AllowPlainHTTP         bool
}

// AddFlags registers --opensearch, --index, --opensearch-username, --opensearch-password-file,
// --prometheus, --prometheus-token-file, --insecure-skip-tls-verify, --ca-file and
// --allow-plain-http-credentials.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.OpenSearchURL, "opensearch", "", "OpenSearch/Elasticsearch URL to index results into, one document per result (credentials in the URL are used and never printed, but every local user sees them in the process list: prefer --opensearch-password-file or $"+opensearch.EnvPassword+")")
	fs.StringVar(&f.Index, "index", opensearch.DefaultIndex, "index for --opensearch")
	fs.StringVar(&f.OpenSearchUsername, "opensearch-username", "", "username for --opensearch (default: from the URL or $"+opensearch.EnvUsername+")")
	fs.StringVar(&f.OpenSearchPasswordFile, "opensearch-password-file", "", "file holding the password for --opensearch (default: from the URL or $"+opensearch.EnvPassword+")")
	fs.StringVar(&f.PrometheusURL, "prometheus", "", "Prometheus URL to query node CPU, CNI/proxy agent pods and interface drops for each case's window")
	fs.StringVar(&f.PrometheusTokenFile, "prometheus-token-file", "", "file holding a bearer token for --prometheus (default: $"+prometheus.EnvToken+")")
	fs.BoolVar(&f.InsecureSkipTLSVerify, "insecure-skip-tls-verify", false, "do not verify the TLS certificates of --opensearch and --prometheus")
	fs.StringVar(&f.CAFile, "ca-file", "", "PEM file of extra certificate authorities to trust for --opensearch and --prometheus")
	fs.BoolVar(&f.AllowPlainHTTP, "allow-plain-http-credentials", false, "send the --opensearch/--prometheus credentials to an http:// URL (refused otherwise: anyone on the way can read them)")
}

// OpenSearch returns the OpenSearch configuration, nil when --opensearch is not set. It
// checks the configuration (URL, index name, CA file) without contacting the cluster.
func (f *Flags) OpenSearch(log io.Writer) (*opensearch.Config, error) {
	if f.OpenSearchURL == "" {
		return nil, nil
	}
	cfg := opensearch.Config{URL: f.OpenSearchURL, Index: f.Index, Username: f.OpenSearchUsername,
		InsecureSkipTLSVerify: f.InsecureSkipTLSVerify, CAFile: f.CAFile, AllowPlainHTTP: f.AllowPlainHTTP, Log: log}
	if f.OpenSearchPasswordFile != "" {
		b, err := os.ReadFile(f.OpenSearchPasswordFile)
		if err != nil {
			return nil, fmt.Errorf("--opensearch-password-file: %w", err)
		}
		cfg.Password = strings.TrimRight(string(b), "\r\n")
		if cfg.Username == "" {
			return nil, errors.New("--opensearch-password-file needs --opensearch-username")
		}
	}
	if _, err := opensearch.New(cfg); err != nil {
		return nil, err
	}
	if w := httpclient.URLPasswordWarning("--opensearch", f.OpenSearchURL,
		"use --opensearch-username with --opensearch-password-file, or $"+opensearch.EnvUsername+" and $"+opensearch.EnvPassword); w != "" && log != nil {
		fmt.Fprintln(log, w)
	}
	return &cfg, nil
}

// Prometheus returns a collector, nil when --prometheus is not set; warnings go to log.
func (f *Flags) Prometheus(log io.Writer) (*prometheus.Collector, error) {
	if f.PrometheusURL == "" {
		return nil, nil
	}
	cfg := prometheus.Config{URL: f.PrometheusURL, InsecureSkipTLSVerify: f.InsecureSkipTLSVerify, CAFile: f.CAFile,
		AllowPlainHTTP: f.AllowPlainHTTP}
	if f.PrometheusTokenFile != "" {
		b, err := os.ReadFile(f.PrometheusTokenFile)
		if err != nil {
			return nil, fmt.Errorf("--prometheus-token-file: %w", err)
		}
		cfg.BearerToken = strings.TrimSpace(string(b))
	}
	c, err := prometheus.New(cfg)
	if err != nil {
		return nil, err
	}
	if w := httpclient.URLPasswordWarning("--prometheus", f.PrometheusURL,
		"use --prometheus-token-file or $"+prometheus.EnvToken); w != "" && log != nil {
		fmt.Fprintln(log, w)
	}
	return c, nil
}
