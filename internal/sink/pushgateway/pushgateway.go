// Package pushgateway pushes a run's metrics to a Prometheus Pushgateway: the families
// `-o prometheus` writes (internal/report's encoder, the one implementation), one PUT per run,
// so a scheduled cnperf (a CronJob, whose pod is gone before any scrape) leaves its last run's
// figures where Prometheus scrapes them.
//
// Each run replaces its own group, /metrics/job/<job>/plan/<plan>/label_<name>/<value>...:
// the plan's metadata.name and the run's labels (the label_* labels its series carry), so the
// runs of different plans, or of the same plan with different labels, never overwrite each
// other, while the next run of the same plan replaces the last one (a case that is gone is
// gone, never a stale figure).
package pushgateway

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/sink/httpclient"
	"github.com/cnperf/cnperf/internal/text"
)

// DefaultJob is the job label of the pushed groups unless told otherwise.
const DefaultJob = "cnperf"

// PlanLabel is the grouping label that carries the plan's metadata.name.
const PlanLabel = "plan"

// Config says where to push.
type Config struct {
	// URL of the Pushgateway, e.g. http://pushgateway.monitoring:9091 (a path prefix is
	// kept). A user and password in it are sent as Basic authentication and never printed.
	URL string
	// Job is the job label of the group (default DefaultJob).
	Job                   string
	InsecureSkipTLSVerify bool
	CAFile                string
	// AllowPlainHTTP lets the URL's password go to an http:// URL (refused otherwise).
	AllowPlainHTTP bool
	// Timeout bounds one request (default 30 s); a push is tried Attempts times (default 3)
	// when the Pushgateway cannot be reached or answers 5xx, Backoff apart (default 1 s,
	// doubled each time).
	Timeout  time.Duration
	Attempts int
	Backoff  time.Duration
}

// Client pushes to one Pushgateway.
type Client struct {
	base       *url.URL // without credentials
	job        string
	user, pass string
	http       *http.Client
	attempts   int
	backoff    time.Duration
	scrubber   *httpclient.Scrubber
}

// New checks the configuration; it does not contact the Pushgateway.
func New(cfg Config) (*Client, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		shown := cfg.URL
		if err == nil {
			shown = u.Redacted()
		} else if i := strings.LastIndex(shown, "@"); i >= 0 {
			shown = "REDACTED" + shown[i:]
		}
		return nil, fmt.Errorf("pushgateway: invalid URL %q (want http(s)://host:port)", shown)
	}
	c := &Client{job: cfg.Job, attempts: cfg.Attempts, backoff: cfg.Backoff}
	if c.job == "" {
		c.job = DefaultJob
	}
	if c.attempts <= 0 {
		c.attempts = 3
	}
	if c.backoff <= 0 {
		c.backoff = time.Second
	}
	if u.User != nil {
		c.user = u.User.Username()
		c.pass, _ = u.User.Password()
	}
	c.base = httpclient.BaseURL(u)
	c.scrubber = httpclient.NewScrubber(c.user, c.pass, "")
	if err := httpclient.CheckPlainHTTP(c.base, c.pass != "", cfg.AllowPlainHTTP, "--allow-plain-http-credentials"); err != nil {
		return nil, fmt.Errorf("pushgateway: %w", err)
	}
	hc, err := httpclient.New(cfg.InsecureSkipTLSVerify, cfg.CAFile, cfg.Timeout, 30*time.Second)
	if err != nil {
		return nil, fmt.Errorf("pushgateway: %w", err)
	}
	c.http = hc
	return c, nil
}

// Label is one grouping label.
type Label struct{ Name, Value string }

// GroupingKey is the group a run's metrics replace, after the job: the plan's name (when the
// run has one) and the run's labels as its series carry them.
func GroupingKey(run *api.Run) ([]Label, error) {
	var key []Label
	if run.Plan != "" {
		key = append(key, Label{PlanLabel, run.Plan})
	}
	labels, err := report.PrometheusRunLabels(run)
	if err != nil {
		return nil, err
	}
	for _, l := range labels {
		key = append(key, Label{l.Name, l.Value})
	}
	return key, nil
}

// GroupURL is the URL of a run's group (without credentials). A value holding a slash, or
// empty, is written in the Pushgateway's base64url form (name@base64/value).
func (c *Client) GroupURL(key []Label) string {
	var b strings.Builder
	b.WriteString(c.base.String() + "/metrics")
	for _, l := range append([]Label{{"job", c.job}}, key...) {
		switch {
		case l.Value == "":
			b.WriteString("/" + l.Name + "@base64/=")
		case strings.Contains(l.Value, "/"):
			b.WriteString("/" + l.Name + "@base64/" + base64.RawURLEncoding.EncodeToString([]byte(l.Value)))
		default:
			b.WriteString("/" + l.Name + "/" + url.PathEscape(l.Value))
		}
	}
	return b.String()
}

// URL is the Pushgateway's URL without credentials.
func (c *Client) URL() string { return c.base.String() }

// Push replaces the run's group with its metrics and returns the group's URL and the number
// of series pushed.
func (c *Client) Push(ctx context.Context, run *api.Run) (group string, series int, err error) {
	key, err := GroupingKey(run)
	if err != nil {
		return "", 0, fmt.Errorf("pushgateway: %w", err)
	}
	group = c.GroupURL(key)
	enc, err := report.Lookup("prometheus")
	if err != nil {
		return group, 0, err
	}
	var body bytes.Buffer
	if err := enc.Encode(&body, []*api.Run{run}); err != nil {
		return group, 0, err
	}
	for _, line := range strings.Split(body.String(), "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			series++
		}
	}
	wait := c.backoff
	for attempt := 1; ; attempt++ {
		retry, err := c.put(ctx, group, body.Bytes())
		if err == nil {
			return group, series, nil
		}
		if !retry || attempt >= c.attempts || ctx.Err() != nil {
			return group, 0, err
		}
		select {
		case <-ctx.Done():
			return group, 0, err
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// put sends one PUT; retry says whether a failure may pass (transport error, 5xx).
func (c *Client) put(ctx context.Context, group string, body []byte) (retry bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, group, bytes.NewReader(body))
	if err != nil {
		return false, fmt.Errorf("pushgateway: PUT %s: %w", group, err)
	}
	req.Header.Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	if c.user != "" || c.pass != "" {
		req.SetBasicAuth(c.user, c.pass)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return true, fmt.Errorf("pushgateway: PUT %s: %w", group, c.scrubber.Error(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 == 2 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		return false, nil
	}
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	text := strings.TrimSpace(c.scrubber.Scrub(string(msg)))
	if text != "" {
		text = ": " + text
	}
	return resp.StatusCode >= 500, fmt.Errorf("pushgateway: PUT %s: %s%s", group, resp.Status, text)
}

// Push pushes every run, each to its own group, and says what it did on log. A later run with
// the same group as an earlier one replaces it (the Pushgateway keeps the last push of a
// group).
func Push(ctx context.Context, cfg Config, runs []*api.Run, log io.Writer) error {
	c, err := New(cfg)
	if err != nil {
		return err
	}
	var errs []error
	for _, run := range runs {
		group, n, err := c.Push(ctx, run)
		if err != nil {
			errs = append(errs, fmt.Errorf("run %s: %w", run.UUID, err))
			continue
		}
		if log != nil {
			// wrapped to fit 120 columns: the group's URL alone can be 100
			msg := fmt.Sprintf("run %s: pushed %d series of %d results to %s", run.UUID, n, len(run.Results), group)
			fmt.Fprintln(log, strings.Join(text.Wrap(msg, text.DefaultWidth, "pushgateway: ", "  "), "\n"))
		}
	}
	return errors.Join(errs...)
}
