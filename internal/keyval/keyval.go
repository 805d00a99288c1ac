// Package keyval reads the KEY=VALUE items of repeatable flags (--label, --node-selector):
// one syntax and one error for all of them.
package keyval

import (
	"strings"

	"github.com/cnperf/cnperf/internal/exit"
)

// Parse reads items as KEY=VALUE: the key trimmed of spaces, the value kept as given (it may
// be empty or hold "="), a later key replacing an earlier one; nil when there are none. An
// item without "=" or with an empty key is a usage error that names the flag, e.g.
// `--label: "cni" is not KEY=VALUE`.
func Parse(flag string, items []string) (map[string]string, error) {
	if len(items) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, it := range items {
		k, v, ok := strings.Cut(it, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, exit.Usage("%s: %q is not KEY=VALUE", flag, it)
		}
		out[strings.TrimSpace(k)] = v
	}
	return out, nil
}
