package app

import (
	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/cli/agentcmd"
	"github.com/cnperf/cnperf/internal/cli/cleanupcmd"
	"github.com/cnperf/cnperf/internal/cli/comparecmd"
	"github.com/cnperf/cnperf/internal/cli/imagecmd"
	"github.com/cnperf/cnperf/internal/cli/importcmd"
	"github.com/cnperf/cnperf/internal/cli/labcmd"
	"github.com/cnperf/cnperf/internal/cli/loadcmd"
	"github.com/cnperf/cnperf/internal/cli/meshcmd"
	"github.com/cnperf/cnperf/internal/cli/programmingcmd"
	"github.com/cnperf/cnperf/internal/cli/reportcmd"
	"github.com/cnperf/cnperf/internal/cli/trendcmd"
	"github.com/cnperf/cnperf/internal/iostreams"
)

// extraCommands are the commands that live in their own packages.
func extraCommands(streams iostreams.Streams) []*cobra.Command {
	return []*cobra.Command{
		reportcmd.NewCommand(streams),
		comparecmd.NewCommand(streams),
		trendcmd.NewCommand(streams),
		importcmd.NewCommand(streams),
		agentcmd.NewCommand(streams),
		labcmd.NewCommand(streams),
		cleanupcmd.NewCommand(streams),
		loadcmd.NewCommand(streams),
		meshcmd.NewCommand(streams),
		programmingcmd.NewCommand(streams),
		imagecmd.NewCommand(streams),
	}
}
