package agentcmd

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/figure"
	"github.com/cnperf/cnperf/internal/loadgen"
)

// PrintHuman prints a test's result for people, iperf3-style.
func PrintHuman(w io.Writer, cfg loadgen.ClientConfig, rep *loadgen.Report) {
	st, s := rep.Setup, rep.Sample
	fmt.Fprintf(w, "%s to %s port %d: %d flow(s), %d-byte messages", st.Profile, cfg.Host, cfg.Port, st.Parallel, st.MessageBytes)
	if st.Burst > 0 {
		fmt.Fprintf(w, ", burst %d", st.Burst)
	}
	fmt.Fprintf(w, ", %s measured after %s warm-up\n", time.Duration(st.DurationNs), time.Duration(st.WarmupNs))
	row := func(k, f string, a ...any) { fmt.Fprintf(w, "  %-13s %s\n", k, fmt.Sprintf(f, a...)) }
	if s.ThroughputBitsPerSecond != nil {
		row("throughput", "%s", figure.BitsPerSecond.Format(*s.ThroughputBitsPerSecond))
	}
	if s.BytesSent != nil && s.BytesReceived != nil && s.PacketsSent == nil {
		row("bytes", "%d sent, %d received in the window", *s.BytesSent, *s.BytesReceived)
	}
	if s.PacketsPerSecond != nil {
		row("packets", "%.0f/s received; %d sent, %d received, %d lost (%.3f%%)", *s.PacketsPerSecond,
			*s.PacketsSent, *s.PacketsReceived, *s.PacketsLost, *s.LossPercent)
		row("jitter", "%.3f ms", *s.JitterMicroseconds/1e3)
	}
	if s.TransactionsPerSecond != nil {
		k := "transactions"
		if s.ConnectionsPerSecond != nil {
			k = "connections"
		}
		row(k, "%.0f/s (%d in %.3f s)", *s.TransactionsPerSecond, *s.Transactions, s.DurationSeconds)
	}
	if l := s.Latency; l != nil {
		row("latency (µs)", "p50 %.1f  p90 %.1f  p99 %.1f  p99.9 %.1f  mean %.1f  min %.1f  max %.1f",
			*l.P50, *l.P90, *l.P99, *l.P999, *l.Mean, *l.Min, *l.Max)
	}
	if s.Retransmits != nil {
		row("retransmits", "%.0f", *s.Retransmits)
	}
	if s.CPU != nil {
		if c := s.CPU.Client; c != nil {
			row("cpu client", "%s", cpuText(c.ProcessPercent, c.UserPercent, c.SystemPercent, c.HostPercent, c.ServiceDemandMicrosecondsPerKB, c.ServiceDemandMicrosecondsPerTransaction))
		}
		if c := s.CPU.Server; c != nil {
			row("cpu server", "%s", cpuText(c.ProcessPercent, c.UserPercent, c.SystemPercent, c.HostPercent, c.ServiceDemandMicrosecondsPerKB, c.ServiceDemandMicrosecondsPerTransaction))
		}
	}
	for _, n := range s.Notes {
		row("note", "%s", n)
	}
}

func cpuText(proc, user, sys, host, sdKB, sdTx *float64) string {
	var b strings.Builder
	if proc != nil {
		fmt.Fprintf(&b, "process %.1f%% of one CPU (user %.1f, system %.1f)", *proc, *user, *sys)
	}
	if host != nil {
		fmt.Fprintf(&b, "; host %.1f%% of all CPUs", *host)
	}
	if sdKB != nil {
		fmt.Fprintf(&b, "; service demand %.3f µs/KB", *sdKB)
	}
	if sdTx != nil {
		fmt.Fprintf(&b, "; service demand %.2f µs/transaction", *sdTx)
	}
	return b.String()
}
