package httpclient

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
)

// Scrubber removes credentials from text that is about to be printed: error bodies a server
// sent back (which may echo the request, its Authorization header or its URL), transport
// errors and log lines. It knows the secrets themselves and their encoded forms, and redacts
// any Basic or Bearer credential it sees, known or not.
type Scrubber struct {
	secrets []string // longest first, so a secret inside another is not left half-replaced
}

// Redacted replaces every credential in scrubbed text.
const Redacted = "REDACTED"

// authRE matches an HTTP credential as it appears in an echoed header or a log line.
var authRE = regexp.MustCompile(`(?i)\b(basic|bearer)(\s+|%20|\+)[A-Za-z0-9+/=._~%-]{4,}`)

// NewScrubber returns a scrubber for a username and password (Basic) and a bearer token; empty
// ones are skipped. The username alone is not secret.
func NewScrubber(username, password, token string) *Scrubber {
	set := map[string]bool{}
	add := func(s string) {
		if s != "" {
			set[s] = true
		}
	}
	for _, s := range []string{password, token} {
		add(s)
		add(url.QueryEscape(s))
		add(url.PathEscape(s))
		add(url.UserPassword("u", s).String()[2:]) // userinfo escaping
	}
	if password != "" {
		basic := username + ":" + password
		add(base64.StdEncoding.EncodeToString([]byte(basic)))
		add(base64.RawStdEncoding.EncodeToString([]byte(basic)))
		add(base64.URLEncoding.EncodeToString([]byte(basic)))
		add(base64.RawURLEncoding.EncodeToString([]byte(basic)))
	}
	if token != "" {
		add(base64.StdEncoding.EncodeToString([]byte(token)))
	}
	s := &Scrubber{}
	for k := range set {
		s.secrets = append(s.secrets, k)
	}
	sort.Slice(s.secrets, func(i, j int) bool {
		if len(s.secrets[i]) != len(s.secrets[j]) {
			return len(s.secrets[i]) > len(s.secrets[j])
		}
		return s.secrets[i] < s.secrets[j]
	})
	return s
}

// Scrub returns text without the credentials.
func (s *Scrubber) Scrub(text string) string {
	if s == nil {
		return authRE.ReplaceAllString(text, "$1 "+Redacted)
	}
	for _, sec := range s.secrets {
		text = strings.ReplaceAll(text, sec, Redacted)
	}
	return authRE.ReplaceAllString(text, "$1 "+Redacted)
}

// Error wraps err so that its message is scrubbed (errors.Is/As still see err).
func (s *Scrubber) Error(err error) error {
	if err == nil {
		return nil
	}
	return &scrubbed{err: err, msg: s.Scrub(err.Error())}
}

type scrubbed struct {
	err error
	msg string
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }

// CheckPlainHTTP refuses to send credentials over plain http (anyone on the path reads them)
// unless allowed; flag names the switch that allows it. u carries no credentials by then.
func CheckPlainHTTP(u *url.URL, hasCredentials, allowed bool, flag string) error {
	if !hasCredentials || allowed || u.Scheme != "http" {
		return nil
	}
	return fmt.Errorf("refusing to send credentials over plain http to %s (anyone on the way can read them): use https, or %s to send them anyway",
		u.Redacted(), flag)
}

// URLPasswordWarning is the warning printed when a URL given on the command line holds a
// password; "" when it holds none.
func URLPasswordWarning(flag, rawURL, instead string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.User == nil {
		return ""
	}
	if _, ok := u.User.Password(); !ok {
		return ""
	}
	return fmt.Sprintf("warning: the %s URL holds a password, which every local user can read in the process list (ps); %s", flag, instead)
}
