package lab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
)

// RunInfo describes the lab namespaces of one run found on the host.
type RunInfo struct {
	Tag   string `json:"tag"`
	RunID string `json:"runID,omitempty"`
	// OwnerPID is the cnperf process that built the lab; 0 for a detached lab (cnperf lab up)
	// or when no namespace carries the marker.
	OwnerPID int `json:"ownerPID,omitempty"`
	// Alive is true while the owner process still runs: its lab is in use.
	Alive      bool     `json:"alive"`
	Namespaces []string `json:"namespaces"`
}

// List finds every lab namespace on the host, grouped by run tag (sorted).
func List(ctx context.Context) ([]RunInfo, error) {
	names, err := listNetNS()
	if err != nil {
		return nil, err
	}
	byTag := map[string]*RunInfo{}
	var tags []string
	for _, n := range names {
		tag := TagOf(n)
		if tag == "" {
			continue
		}
		ri, ok := byTag[tag]
		if !ok {
			ri = &RunInfo{Tag: tag}
			byTag[tag] = ri
			tags = append(tags, tag)
		}
		ri.Namespaces = append(ri.Namespaces, n)
		if ri.RunID == "" {
			if m, ok := readMarker(ctx, n); ok {
				ri.RunID, ri.OwnerPID, ri.Alive = m.RunID, m.PID, m.alive()
			}
		}
	}
	sort.Strings(tags)
	out := make([]RunInfo, 0, len(tags))
	for _, t := range tags {
		out = append(out, *byTag[t])
	}
	return out, nil
}

// readMarker reads the owner marker from the ifalias of a namespace's loopback.
func readMarker(ctx context.Context, ns string) (ownerMarker, bool) {
	out, err := run(ctx, nil, "ip", "-n", ns, "-j", "link", "show", "lo")
	if err != nil {
		return ownerMarker{}, false
	}
	var links []struct {
		IfAlias string `json:"ifalias"`
	}
	if json.Unmarshal(out, &links) != nil || len(links) != 1 {
		return ownerMarker{}, false
	}
	return parseMarker(links[0].IfAlias)
}

// CleanupOptions select what Cleanup removes.
type CleanupOptions struct {
	// Tag limits cleanup to one run's namespaces; empty means every run.
	Tag string
	// Force removes the namespaces of runs whose owner is still alive (breaking that run).
	Force bool
}

// CleanupReport says what Cleanup did.
type CleanupReport struct {
	Removed []string `json:"removed"`
	// Skipped are runs left alone because their owner still runs.
	Skipped []RunInfo `json:"skipped,omitempty"`
	// StrayLinks are interfaces named like the lab's in the root namespace. The lab never
	// creates any there; they are reported, not deleted, since cnperf cannot prove they are its own.
	StrayLinks []string `json:"strayLinks,omitempty"`
}

var strayLinkRE = regexp.MustCompile(`^cnp[0-9a-f]{6}`)

// Cleanup removes the lab namespaces left by runs that are no longer running (killed with
// SIGKILL, crashed, or detached labs from `cnperf lab up`), and with them every interface,
// route, rule and process inside.
func Cleanup(ctx context.Context, o CleanupOptions) (CleanupReport, error) {
	var rep CleanupReport
	if err := CheckPrivileges(); err != nil {
		return rep, err
	}
	runs, err := List(ctx)
	if err != nil {
		return rep, err
	}
	var errs []error
	for _, r := range runs {
		if o.Tag != "" && r.Tag != o.Tag {
			continue
		}
		if r.Alive && !o.Force {
			rep.Skipped = append(rep.Skipped, r)
			continue
		}
		for i := len(r.Namespaces) - 1; i >= 0; i-- {
			n := r.Namespaces[i]
			if err := deleteNetNS(ctx, n); err != nil {
				errs = append(errs, err)
				continue
			}
			rep.Removed = append(rep.Removed, n)
		}
	}
	sort.Strings(rep.Removed)
	if out, err := run(ctx, nil, "ip", "-j", "link", "show"); err == nil {
		var links []struct {
			IfName string `json:"ifname"`
		}
		if json.Unmarshal(out, &links) == nil {
			for _, l := range links {
				if strayLinkRE.MatchString(l.IfName) {
					rep.StrayLinks = append(rep.StrayLinks, l.IfName)
				}
			}
		}
	}
	if len(errs) > 0 {
		return rep, fmt.Errorf("lab cleanup: %w", errors.Join(errs...))
	}
	return rep, nil
}
