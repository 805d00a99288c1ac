// Package sink holds the options shared by the result sinks (OpenSearch, Prometheus), so that
// every command that ships results reads them the same way.
package sink

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cnperf/cnperf/internal/sink/httpclient"
	"github.com/cnperf/cnperf/internal/sink/opensearch"
	"github.com/cnperf/cnperf/internal/sink/prometheus"
	"github.com/cnperf/cnperf/internal/sink/pushgateway"
)

// Options are the sinks' settings (internal/cli/flags binds them to flags).
type Options struct {
	OpenSearchURL          string
	Index                  string
	OpenSearchUsername     string
	OpenSearchPasswordFile string
	PrometheusURL          string
	PrometheusTokenFile    string
	PushGatewayURL         string
	PushJob                string
	InsecureSkipTLSVerify  bool
	CAFile                 string
	AllowPlainHTTP         bool
}

// OpenSearch returns the OpenSearch configuration, nil when --opensearch is not set. It
// checks the configuration (URL, index name, CA file) without contacting the cluster.
func (f *Options) OpenSearch(log io.Writer) (*opensearch.Config, error) {
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
func (f *Options) Prometheus(log io.Writer) (*prometheus.Collector, error) {
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

// PushGateway returns the Pushgateway configuration, nil when --push-gateway is not set. It
// checks the configuration without contacting the Pushgateway.
func (f *Options) PushGateway(log io.Writer) (*pushgateway.Config, error) {
	if f.PushGatewayURL == "" {
		return nil, nil
	}
	cfg := pushgateway.Config{URL: f.PushGatewayURL, Job: f.PushJob, InsecureSkipTLSVerify: f.InsecureSkipTLSVerify,
		CAFile: f.CAFile, AllowPlainHTTP: f.AllowPlainHTTP}
	if _, err := pushgateway.New(cfg); err != nil {
		return nil, err
	}
	if w := httpclient.URLPasswordWarning("--push-gateway", f.PushGatewayURL,
		"put the Pushgateway behind a proxy that authenticates the pod instead"); w != "" && log != nil {
		fmt.Fprintln(log, w)
	}
	return &cfg, nil
}
