package httpclient

import (
	"encoding/base64"
	"errors"
	"io"
	"net/url"
	"strings"
	"testing"
)

func TestScrub(t *testing.T) {
	const user, pw, tok = "elastic", "p@ss:w/rd+1", "eyJhbGciOiJSUzI1NiJ9.abc-def_ghi"
	s := NewScrubber(user, pw, tok)
	basic := base64.StdEncoding.EncodeToString([]byte(user + ":" + pw))
	for _, tc := range []struct{ name, in string }{
		{"password", "password was " + pw},
		{"query-escaped password", "url ?pw=" + url.QueryEscape(pw)},
		{"path-escaped password", "url /" + url.PathEscape(pw)},
		{"userinfo", "http://" + url.UserPassword(user, pw).String() + "@h/"},
		{"basic header", "Authorization: Basic " + basic},
		{"basic without the header", "creds " + basic + " end"},
		{"url-safe base64", base64.URLEncoding.EncodeToString([]byte(user + ":" + pw))},
		{"bearer header", "Authorization: Bearer " + tok},
		{"bare token", "token " + tok},
		{"someone else's basic", "Authorization: basic Zm9vOmJhcg=="},
		{"someone else's bearer", "bearer%20abcdefgh12345"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := s.Scrub(tc.in)
			for _, sec := range []string{pw, basic, tok, url.QueryEscape(pw), "Zm9vOmJhcg==", "abcdefgh12345"} {
				if strings.Contains(got, sec) {
					t.Errorf("Scrub(%q) = %q: still holds %q", tc.in, got, sec)
				}
			}
			if !strings.Contains(got, Redacted) {
				t.Errorf("Scrub(%q) = %q: nothing redacted", tc.in, got)
			}
		})
	}
	if got := s.Scrub("HTTP 503: service unavailable"); got != "HTTP 503: service unavailable" {
		t.Errorf("text without secrets changed: %q", got)
	}
	err := s.Error(&url.Error{Op: "Get", URL: "http://h/", Err: errors.New("bad " + pw)})
	if strings.Contains(err.Error(), pw) || !errors.Is(err, err) {
		t.Errorf("Error() = %v", err)
	}
	if e := s.Error(io.EOF); !errors.Is(e, io.EOF) {
		t.Error("scrubbed error does not unwrap")
	}
}

func TestCheckPlainHTTP(t *testing.T) {
	h, _ := url.Parse("http://h:9200")
	hs, _ := url.Parse("https://h:9200")
	for _, tc := range []struct {
		u          *url.URL
		creds, ok  bool
		wantRefuse bool
	}{
		{h, true, false, true},
		{h, true, true, false},
		{h, false, false, false},
		{hs, true, false, false},
	} {
		err := CheckPlainHTTP(tc.u, tc.creds, tc.ok, "--allow-plain-http-credentials")
		if (err != nil) != tc.wantRefuse {
			t.Errorf("%s creds=%v allowed=%v: %v", tc.u, tc.creds, tc.ok, err)
		}
		if err != nil && !strings.Contains(err.Error(), "--allow-plain-http-credentials") {
			t.Errorf("the refusal does not name the flag: %v", err)
		}
	}
	if w := URLPasswordWarning("--opensearch", "https://u:pw@h", "use a file"); !strings.Contains(w, "process list") || strings.Contains(w, "pw@") {
		t.Errorf("warning = %q", w)
	}
	if w := URLPasswordWarning("--opensearch", "https://u@h", "x"); w != "" {
		t.Errorf("warning without a password: %q", w)
	}
}
