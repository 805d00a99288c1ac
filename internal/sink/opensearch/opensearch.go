// Package opensearch ships runs to OpenSearch or Elasticsearch (7.x, 8.x): one document per
// result with its raw samples, the run's metadata and the cluster details, indexed with the
// bulk API under an index template that maps numbers as doubles, times as dates and strings
// as keywords. Credentials come from the URL, the config (flags naming files) or the
// environment and never appear in messages: the base URL is stripped of them, they travel in
// an Authorization header, every error body and transport error is scrubbed of the password,
// its Basic form and any Basic/Bearer credential, and they go over plain http only when
// allowed.
package opensearch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/sink/httpclient"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// Environment variables read when the URL and Config carry no credentials.
const (
	EnvUsername = "CNPERF_OPENSEARCH_USERNAME"
	EnvPassword = "CNPERF_OPENSEARCH_PASSWORD"
)

// DefaultIndex is the index cnperf writes to unless told otherwise.
const DefaultIndex = "cnperf-results"

// Config says where and how to index.
type Config struct {
	// URL of the cluster, e.g. https://admin:secret@search.example:9200. Credentials in it are
	// used and removed from everything printed.
	URL string
	// Index to write to (default DefaultIndex).
	Index string
	// Username and Password override the URL's; when both are empty the environment's
	// CNPERF_OPENSEARCH_USERNAME and CNPERF_OPENSEARCH_PASSWORD are used.
	Username, Password string
	// InsecureSkipTLSVerify turns certificate verification off (it is on by default).
	InsecureSkipTLSVerify bool
	// CAFile is a PEM bundle of extra trusted certificate authorities.
	CAFile string
	// AllowPlainHTTP lets credentials go to an http:// URL (refused otherwise).
	AllowPlainHTTP bool
	// MaxRetries bounds retries of a request answered 429 or 5xx or failing in transport
	// (default 5); Backoff is the first wait, doubled each time up to 30 s (default 500 ms).
	MaxRetries int
	Backoff    time.Duration
	// Timeout bounds one HTTP request (default 60 s).
	Timeout time.Duration
	// Log receives retry notices (optional).
	Log io.Writer
}

// Client talks to one cluster.
type Client struct {
	base       *url.URL // without credentials
	index      string
	user, pass string
	http       *http.Client
	maxRetries int
	backoff    time.Duration
	log        io.Writer
	scrubber   *httpclient.Scrubber
}

// New checks the configuration and returns a client; it does not contact the cluster.
func New(cfg Config) (*Client, error) {
	if cfg.URL == "" {
		return nil, errors.New("opensearch: no URL")
	}
	u, err := url.Parse(cfg.URL)
	if err != nil {
		// url.Parse errors quote the input, which may hold a password.
		return nil, fmt.Errorf("opensearch: invalid URL %q", redactURLString(cfg.URL))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("opensearch: URL %s: scheme must be http or https", Redact(u))
	}
	if u.Host == "" {
		return nil, fmt.Errorf("opensearch: URL %s has no host", Redact(u))
	}
	c := &Client{index: cfg.Index, maxRetries: cfg.MaxRetries, backoff: cfg.Backoff, log: cfg.Log}
	if c.index == "" {
		c.index = DefaultIndex
	}
	if err := checkIndexName(c.index); err != nil {
		return nil, err
	}
	if c.maxRetries == 0 {
		c.maxRetries = 5
	}
	if c.backoff == 0 {
		c.backoff = 500 * time.Millisecond
	}
	if u.User != nil {
		c.user = u.User.Username()
		c.pass, _ = u.User.Password()
	}
	if cfg.Username != "" || cfg.Password != "" {
		c.user, c.pass = cfg.Username, cfg.Password
	}
	if c.user == "" && c.pass == "" {
		c.user, c.pass = os.Getenv(EnvUsername), os.Getenv(EnvPassword)
	}
	c.base = httpclient.BaseURL(u)
	c.scrubber = httpclient.NewScrubber(c.user, c.pass, "")
	c.http, err = httpclient.ClientFor(c.base, c.user != "" || c.pass != "", cfg.AllowPlainHTTP, cfg.InsecureSkipTLSVerify,
		cfg.CAFile, cfg.Timeout, 60*time.Second)
	if err != nil {
		return nil, fmt.Errorf("opensearch: %w", err)
	}
	return c, nil
}

// checkIndexName applies OpenSearch's index name rules, so a bad name fails before any request.
func checkIndexName(n string) error {
	if n != strings.ToLower(n) || strings.ContainsAny(n, `\/*?"<>| ,#:`) || strings.HasPrefix(n, "_") ||
		strings.HasPrefix(n, "-") || strings.HasPrefix(n, "+") || n == "." || n == ".." || len(n) > 255 {
		return fmt.Errorf("opensearch: invalid index name %q (lowercase, no spaces or \\/*?\"<>|,#:, not starting with _ - +)", n)
	}
	return nil
}

// Redact prints a URL without its password.
func Redact(u *url.URL) string {
	c := *u
	if c.User != nil {
		c.User = url.User(c.User.Username())
	}
	return c.String()
}

// redactURLString removes userinfo from a URL that did not parse.
func redactURLString(s string) string {
	if i := strings.Index(s, "://"); i >= 0 {
		rest := s[i+3:]
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			return s[:i+3] + "REDACTED@" + rest[at+1:]
		}
	}
	return s
}

// URL is the cluster URL without credentials, for messages.
func (c *Client) URL() string { return c.base.String() }

// Index is the index written to.
func (c *Client) Index() string { return c.index }

// scrub removes the credentials (the password, its Basic form, any echoed Authorization) from
// text that came back from the server or the transport.
func (c *Client) scrub(s string) string { return c.scrubber.Scrub(s) }

// HTTPError is a non-2xx answer.
type HTTPError struct {
	Method, URL string
	Status      int
	Body        string
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("opensearch: %s %s: HTTP %d: %s", e.Method, e.URL, e.Status, e.Body)
}

func retryable(status int) bool { return status == http.StatusTooManyRequests || status >= 500 }

// do sends one request with retries; it returns the body of a 2xx answer.
func (c *Client) do(ctx context.Context, method, path, contentType string, body []byte) ([]byte, error) {
	u := c.base.String() + path
	wait := c.backoff
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("opensearch: %s %s: %s", method, u, c.scrub(err.Error()))
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		req.Header.Set("Accept", "application/json")
		if c.user != "" || c.pass != "" {
			req.SetBasicAuth(c.user, c.pass)
		}
		resp, err := c.http.Do(req)
		var status int
		var data []byte
		if err == nil {
			data, err = io.ReadAll(io.LimitReader(resp.Body, 64<<20))
			resp.Body.Close()
			status = resp.StatusCode
		}
		switch {
		case err == nil && status/100 == 2:
			return data, nil
		case err == nil && !retryable(status):
			return nil, &HTTPError{Method: method, URL: u, Status: status, Body: truncate(c.scrub(string(data)), 2000)}
		case ctx.Err() != nil:
			return nil, fmt.Errorf("opensearch: %s %s: %w", method, u, ctx.Err())
		case attempt >= c.maxRetries:
			if err != nil {
				return nil, fmt.Errorf("opensearch: %s %s: giving up after %d attempts: %s", method, u, attempt+1, c.scrub(err.Error()))
			}
			return nil, &HTTPError{Method: method, URL: u, Status: status, Body: truncate(c.scrub(string(data)), 2000)}
		}
		why := fmt.Sprintf("HTTP %d", status)
		if err != nil {
			why = c.scrub(err.Error())
		}
		if c.log != nil {
			fmt.Fprintf(c.log, "opensearch: %s %s: %s; retrying in %s\n", method, u, why, wait)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("opensearch: %s %s: %w", method, u, ctx.Err())
		case <-time.After(wait):
		}
		wait = min(wait*2, 30*time.Second)
	}
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// Ping checks that the cluster answers and returns its product and version.
func (c *Client) Ping(ctx context.Context) (string, error) {
	data, err := c.do(ctx, http.MethodGet, "/", "", nil)
	if err != nil {
		return "", err
	}
	var info struct {
		Version struct {
			Number       string `json:"number"`
			Distribution string `json:"distribution"`
		} `json:"version"`
	}
	if err := json.Unmarshal(data, &info); err != nil {
		return "", fmt.Errorf("opensearch: GET %s/: not an OpenSearch/Elasticsearch answer: %s", c.URL(), c.scrub(err.Error()))
	}
	d := info.Version.Distribution
	if d == "" {
		d = "elasticsearch"
	}
	return d + " " + info.Version.Number, nil
}

// EnsureTemplate creates or updates the index template for Index()* (composable
// _index_template API: OpenSearch 1+, Elasticsearch 7.8+).
func (c *Client) EnsureTemplate(ctx context.Context) error {
	body, err := json.Marshal(Template(c.index))
	if err != nil {
		return err
	}
	_, err = c.do(ctx, http.MethodPut, "/_index_template/"+url.PathEscape(c.index+"-template"), "application/json", body)
	return err
}

// DocError is one document the bulk API refused.
type DocError struct {
	ID     string `json:"id"`
	Status int    `json:"status"`
	Reason string `json:"reason"`
}

// BulkResult says what a bulk request did.
type BulkResult struct {
	Indexed int        `json:"indexed"`
	Failed  []DocError `json:"failed,omitempty"`
}

// PartialError reports documents that were not indexed while others were.
type PartialError struct{ Result BulkResult }

func (e *PartialError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "opensearch: %d of %d documents not indexed:", len(e.Result.Failed), len(e.Result.Failed)+e.Result.Indexed)
	for _, d := range e.Result.Failed {
		fmt.Fprintf(&b, "\n  %s: HTTP %d: %s", d.ID, d.Status, d.Reason)
	}
	return b.String()
}

// IndexRun ensures the template and bulk-indexes one document per result of run. Documents
// have stable ids (run uuid and case number), so indexing a run again overwrites it.
// Documents refused with 429 are retried; other refusals come back in a *PartialError that
// lists each document.
func (c *Client) IndexRun(ctx context.Context, run *api.Run) (BulkResult, error) {
	if err := c.EnsureTemplate(ctx); err != nil {
		return BulkResult{}, err
	}
	return c.Bulk(ctx, Documents(run))
}

// Bulk indexes documents (refresh=wait_for, so they are searchable when it returns).
func (c *Client) Bulk(ctx context.Context, docs []Document) (BulkResult, error) {
	var res BulkResult
	pending := docs
	wait := c.backoff
	for attempt := 0; len(pending) > 0; attempt++ {
		var body bytes.Buffer
		for _, d := range pending {
			meta, _ := json.Marshal(map[string]map[string]string{"index": {"_index": c.index, "_id": d.ID}})
			src, err := json.Marshal(d.Source)
			if err != nil {
				return res, fmt.Errorf("opensearch: encode document %s: %w", d.ID, err)
			}
			body.Write(meta)
			body.WriteByte('\n')
			body.Write(src)
			body.WriteByte('\n')
		}
		data, err := c.do(ctx, http.MethodPost, "/_bulk?refresh=wait_for", "application/x-ndjson", body.Bytes())
		if err != nil {
			return res, err
		}
		var br struct {
			Errors bool `json:"errors"`
			Items  []map[string]struct {
				ID     string          `json:"_id"`
				Status int             `json:"status"`
				Error  json.RawMessage `json:"error"`
			} `json:"items"`
		}
		if err := json.Unmarshal(data, &br); err != nil {
			return res, fmt.Errorf("opensearch: bulk answer: %w", err)
		}
		if len(br.Items) != len(pending) {
			return res, fmt.Errorf("opensearch: bulk answered %d items for %d documents", len(br.Items), len(pending))
		}
		var retry []Document
		for i, it := range br.Items {
			item := it["index"]
			switch {
			case item.Status/100 == 2:
				res.Indexed++
			case item.Status == http.StatusTooManyRequests && attempt < c.maxRetries:
				retry = append(retry, pending[i])
			default:
				res.Failed = append(res.Failed, DocError{ID: pending[i].ID, Status: item.Status, Reason: c.scrub(errorReason(item.Error))})
			}
		}
		pending = retry
		if len(pending) > 0 {
			if c.log != nil {
				fmt.Fprintf(c.log, "opensearch: %d documents refused with HTTP 429; retrying in %s\n", len(pending), wait)
			}
			select {
			case <-ctx.Done():
				return res, ctx.Err()
			case <-time.After(wait):
			}
			wait = min(wait*2, 30*time.Second)
		}
	}
	if len(res.Failed) > 0 {
		return res, &PartialError{Result: res}
	}
	return res, nil
}

func errorReason(raw json.RawMessage) string {
	var e struct {
		Type   string `json:"type"`
		Reason string `json:"reason"`
	}
	if json.Unmarshal(raw, &e) == nil && (e.Type != "" || e.Reason != "") {
		return e.Type + ": " + e.Reason
	}
	return string(raw)
}
