package pushgateway

import (
	"strings"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

func TestGroupURL(t *testing.T) {
	for _, tc := range []struct {
		name, url, job, plan string
		labels               map[string]string
		want                 string
	}{
		{"no plan, no labels", "http://pg:9091", "", "", nil, "http://pg:9091/metrics/job/cnperf"},
		{"plan and labels sorted, names sanitised", "http://pg:9091/", "nightly", "cni-comparison",
			map[string]string{"env": "lab", "cnperf.dev/cni": "calico"},
			"http://pg:9091/metrics/job/nightly/plan/cni-comparison/label_cnperf_dev_cni/calico/label_env/lab"},
		{"a slash in a value is base64url", "https://u:p@pg.example/prefix?x=1", "", "a/b", map[string]string{"zone": "eu/1"},
			"https://pg.example/prefix/metrics/job/cnperf/plan@base64/YS9i/label_zone@base64/ZXUvMQ"},
		{"empty label values are dropped, as in the series", "http://pg:9091", "", "", map[string]string{"empty": ""},
			"http://pg:9091/metrics/job/cnperf"},
		{"a space is path-escaped", "http://pg:9091", "", "my plan", nil, "http://pg:9091/metrics/job/cnperf/plan/my%20plan"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(Config{URL: tc.url, Job: tc.job, AllowPlainHTTP: true})
			if err != nil {
				t.Fatal(err)
			}
			key, err := GroupingKey(&api.Run{Plan: tc.plan, Labels: tc.labels})
			if err != nil {
				t.Fatal(err)
			}
			if got := c.GroupURL(key); got != tc.want {
				t.Errorf("GroupURL = %s\nwant       %s", got, tc.want)
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	for _, tc := range []struct{ name, url, want string }{
		{"no scheme", "pg:9091", `pushgateway: invalid URL "pg:9091" (want http(s)://host:port)`},
		{"no host", "http://", `pushgateway: invalid URL "http:" (want http(s)://host:port)`},
		{"password is never printed", "ftp://u:secret@pg", `pushgateway: invalid URL "ftp://u:xxxxx@pg"`},
		{"password over plain http", "http://u:secret@pg:9091", "refusing to send credentials over plain http to http://pg:9091"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(Config{URL: tc.url})
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "secret") {
				t.Errorf("New(%q) = %v, want an error containing %q and not the password", tc.url, err, tc.want)
			}
		})
	}
}

func TestGroupingKeyLabelClash(t *testing.T) {
	_, err := GroupingKey(&api.Run{UUID: "r1", Labels: map[string]string{"a.b": "1", "a_b": "2"}})
	if err == nil || !strings.Contains(err.Error(), "label_a_b") {
		t.Errorf("err = %v, want the clash named", err)
	}
}
