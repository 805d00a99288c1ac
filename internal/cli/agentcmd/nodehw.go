package agentcmd

import (
	"encoding/json"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/iostreams"
	"github.com/cnperf/cnperf/internal/nodehw"
)

func newNodeHardwareCommand(streams iostreams.Streams) *cobra.Command {
	var address string
	c := &cobra.Command{
		Use:   "node-hardware [--address IP]",
		Short: "This node's CPU, kernel and uplink (driver, speed, MTU, offloads), as JSON",
		Long: `node-hardware prints one JSON object: the CPU model and count (/proc/cpuinfo), the kernel
release, and, with --address, the interface that holds that address: its driver, link speed,
MTU and offloads (gso, gro, tso, rx-checksum, tx-checksum, as ethtool -k shows them). The
platform runs it in an endpoint pod on each node for the run's cluster details; the uplink is
only visible from a pod on the node's host network. What cannot be read is said in "note".`,
		Example: `  cnperf agent node-hardware --address 10.0.0.11`,
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return json.NewEncoder(streams.Out).Encode(nodehw.Read(address))
		},
	}
	c.Flags().StringVar(&address, "address", "", "the node's address: its interface is the uplink described")
	return c
}
