package runcmd

import (
	"github.com/spf13/cobra"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/cli/flags"
	"github.com/cnperf/cnperf/internal/driver/all"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/report"
)

// PlatformNames are the values of --platform, in the order help shows them.
var PlatformNames = []string{"auto", "local", "kube"}

// addCompletions offers the values of run's enumerated flags from their registries.
func addCompletions(c *cobra.Command) {
	flags.CompleteValues(c, "profile", true, func() []string { return plan.Strings(api.Profiles) })
	flags.CompleteValues(c, "driver", true, all.Names)
	flags.CompleteValues(c, "path", true, func() []string { return append(plan.Strings(api.Paths), "all") })
	flags.CompleteValues(c, "output", false, report.Formats)
	flags.CompleteValues(c, "platform", false, func() []string { return PlatformNames })
	flags.CompleteValues(c, "ip-family", false, func() []string { return []string{"ipv4", "ipv6", "dual"} })
}
