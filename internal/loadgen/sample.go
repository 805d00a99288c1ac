package loadgen

import (
	"errors"
	"fmt"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/loadgen/control"
	"github.com/cnperf/cnperf/internal/stats/hdr"
)

// receiverThroughput fills a TCP stream sample from the receiving side: the bytes it read in its
// window (rxSec long) are the throughput; the sender's bytes and retransmits complete it. kb is
// the kilobytes received.
func receiverThroughput(s *api.Sample, receiver, sender string, rx, tx int64, rxSec float64, retransmits int64) (kb float64, err error) {
	if rx <= 0 {
		return 0, fmt.Errorf("the %s received no data in the measured window (%s sent %d bytes)", receiver, sender, tx)
	}
	s.ThroughputBitsPerSecond = new(float64(rx) * 8 / rxSec)
	s.BytesSent, s.BytesReceived = new(tx), new(rx)
	s.Retransmits = new(float64(retransmits))
	s.Notes = append(s.Notes, "throughput is what the receiver ("+receiver+") read in its window")
	return float64(rx) / 1024, nil
}

// buildSample turns both sides' counters into one sample. It returns an error instead of a
// sample with zero figures when the window saw no traffic.
func buildSample(rep *Report, start, end time.Time, hist *hdr.Histogram, histOn bool, zc zeroCopyStats) (api.Sample, error) {
	st, srv := rep.Setup, rep.Server
	s := api.Sample{StartTime: start, EndTime: end, DurationSeconds: float64(rep.WindowNs) / 1e9}
	clientSec := float64(rep.WindowNs) / 1e9
	serverSec := float64(srv.WindowNs) / 1e9
	if kindOf(st.Profile) == kindStreamLat {
		return streamLatSample(rep, s, hist, histOn)
	}
	cw := sumClientFlows(rep.ClientFlows)
	sw, jitterNs := sumServerFlows(srv.Flows)
	var kb, tx float64
	var err error
	switch kindOf(st.Profile) {
	case kindStream:
		kb, err = receiverThroughput(&s, "server", "client", sw.WindowBytesRx, cw.WindowBytesTx, serverSec, cw.Retransmits)
	case kindMaerts:
		kb, err = receiverThroughput(&s, "client", "server", cw.WindowBytesRx, sw.WindowBytesTx, clientSec, sw.WindowRetransmits)
	case kindUDPStream:
		kb, err = udpStreamFigures(&s, int64(cw.LastSeq), sw, jitterNs, st.MessageBytes, clientSec)
	case kindTCPRR, kindUDPRR, kindCRR:
		tx, err = rrFigures(&s, st, cw, sw, clientSec)
		if err == nil && histOn && hist.Count() > 0 {
			s.Latency = hist.Latency()
			s.Histogram = hist.ToAPI()
		}
	}
	if err != nil {
		return s, err
	}
	s.Notes = append(s.Notes, sendNotes(rep.Offload, zc)...)
	s.Notes = append(s.Notes, srv.Notes...)
	s.CPU = &api.SampleCPU{Client: cpuUsage(rep.ClientCPU, kb, tx), Server: cpuUsage(srv.CPU, kb, tx)}
	return s, nil
}

// sumClientFlows adds up the client's flows.
func sumClientFlows(flows []ClientFlow) ClientFlow {
	var cw ClientFlow
	for _, f := range flows {
		cw.WindowBytesTx += f.WindowBytesTx
		cw.WindowBytesRx += f.WindowBytesRx
		cw.WindowTransactions += f.WindowTransactions
		cw.Retransmits += f.Retransmits
		cw.LastSeq += f.LastSeq
		cw.LostTransactions += f.LostTransactions
	}
	return cw
}

// sumServerFlows adds up the server's flows, and averages the jitter of the flows that
// received datagrams.
func sumServerFlows(flows []control.FlowCounters) (sw control.FlowCounters, jitterNs float64) {
	var jitterSum float64
	jitterN := 0
	for _, f := range flows {
		sw.WindowBytesRx += f.WindowBytesRx
		sw.WindowBytesTx += f.WindowBytesTx
		sw.WindowTransactions += f.WindowTransactions
		sw.WindowRetransmits += f.WindowRetransmits
		sw.PacketsRx += f.PacketsRx
		sw.Lost += f.Lost
		sw.OutOfOrder += f.OutOfOrder
		if f.PacketsRx > 0 {
			jitterSum += f.JitterNs
			jitterN++
		}
	}
	return sw, jitterSum / float64(jitterN)
}

// udpStreamFigures fills a UDP_STREAM sample from the datagrams the client sent and the
// server received; kb is the kilobytes of payload received.
func udpStreamFigures(s *api.Sample, sent int64, sw control.FlowCounters, jitterNs float64, messageBytes int, clientSec float64) (kb float64, err error) {
	if sw.PacketsRx <= 0 {
		return 0, fmt.Errorf("no datagram arrived in the measured window (client sent %d)", sent)
	}
	s.PacketsSent, s.PacketsReceived, s.PacketsLost = new(sent), new(sw.PacketsRx), new(sw.Lost)
	s.PacketsPerSecond = new(float64(sw.PacketsRx) / clientSec)
	s.ThroughputBitsPerSecond = new(float64(sw.PacketsRx*int64(messageBytes)) * 8 / clientSec)
	s.BytesSent, s.BytesReceived = new(sent*int64(messageBytes)), new(sw.PacketsRx*int64(messageBytes))
	if sent > 0 {
		s.LossPercent = new(100 * float64(sw.Lost) / float64(sent))
	}
	s.JitterMicroseconds = new(jitterNs / 1e3)
	s.Notes = append(s.Notes, "loss and jitter as iperf3 computes them (sequence gaps minus late arrivals, RFC 1889 jitter), "+
		"plus datagrams lost after the last one received; throughput counts UDP payload")
	if sw.OutOfOrder > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("%d datagrams arrived out of order", sw.OutOfOrder))
	}
	return float64(sw.PacketsRx*int64(messageBytes)) / 1024, nil
}

// rrFigures fills a TCP_RR, UDP_RR or TCP_CRR sample from the transactions the client
// completed; tx is their number.
func rrFigures(s *api.Sample, st control.Setup, cw ClientFlow, sw control.FlowCounters, clientSec float64) (tx float64, err error) {
	if cw.WindowTransactions <= 0 {
		return 0, errors.New("no transaction completed in the measured window")
	}
	tx = float64(cw.WindowTransactions)
	rate := tx / clientSec
	s.Transactions = new(cw.WindowTransactions)
	s.TransactionsPerSecond = new(rate)
	if kindOf(st.Profile) == kindCRR {
		s.ConnectionsPerSecond = new(rate)
		if st.CRRClose == control.CloseRST {
			s.Notes = append(s.Notes, "close: RST (SO_LINGER 0), no TIME_WAIT")
		} else {
			s.Notes = append(s.Notes, "close: graceful (the server closes first with FIN and keeps TIME_WAIT, like netperf)")
		}
	} else if kindOf(st.Profile) == kindTCPRR {
		s.Retransmits = new(float64(cw.Retransmits + sw.WindowRetransmits))
	}
	if cw.LostTransactions > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("%d transactions lost (no response within %s) and restarted", cw.LostTransactions, ioTimeout))
	}
	return tx, nil
}

// sendNotes says which offloads the client used and how its zero-copy sends went.
func sendNotes(offload []string, zc zeroCopyStats) []string {
	var notes []string
	for _, o := range offload {
		notes = append(notes, "offload: "+o)
	}
	if zc.sends > 0 {
		notes = append(notes, fmt.Sprintf("zero-copy: %d sends, %d completed, %d of them copied by the kernel", zc.sends, zc.completions, zc.copied))
		if zc.fellBack {
			notes = append(notes, "zero-copy: the kernel copied every zero-copy send on this path, so the client switched to plain sends (MSG_ZEROCOPY pays off only on devices that can send from user pages)")
		}
	}
	return notes
}

// streamLatSample is TCP_STREAM_LAT's sample: the stream flows' throughput as the server read
// it, and the round trips of the probe's small messages (its own connection, timed while the
// streams ran) from their histogram.
func streamLatSample(rep *Report, s api.Sample, hist *hdr.Histogram, histOn bool) (api.Sample, error) {
	st, srv := rep.Setup, rep.Server
	var rx, tx, retrans int64
	for _, f := range srv.Flows {
		if !isProbe(st, f.Flow) {
			rx += f.WindowBytesRx
		}
	}
	var probe ClientFlow
	for i, f := range rep.ClientFlows {
		retrans += f.Retransmits
		if isProbe(st, i) {
			probe = f
		} else {
			tx += f.WindowBytesTx
		}
	}
	if rx <= 0 {
		return s, fmt.Errorf("the server received no stream data in the measured window (client sent %d bytes)", tx)
	}
	if probe.WindowTransactions <= 0 {
		return s, errors.New("the latency probe completed no transaction in the measured window")
	}
	s.ThroughputBitsPerSecond = new(float64(rx) * 8 / (float64(srv.WindowNs) / 1e9))
	s.BytesSent, s.BytesReceived = new(tx), new(rx)
	s.Retransmits = new(float64(retrans))
	s.Transactions = new(probe.WindowTransactions)
	s.TransactionsPerSecond = new(float64(probe.WindowTransactions) / (float64(rep.WindowNs) / 1e9))
	if histOn && hist.Count() > 0 {
		s.Latency = hist.Latency()
		s.Histogram = hist.ToAPI()
	}
	s.Notes = append(s.Notes, fmt.Sprintf("latency under load: %d stream flow(s) of %d-byte writes, and on a connection of "+
		"its own one %d-byte request/response at a time; throughput is what the server read of the streams, transactions "+
		"and latency are the small messages'", st.Parallel, st.MessageBytes, st.ResponseBytes))
	s.Notes = append(s.Notes, srv.Notes...)
	s.CPU = &api.SampleCPU{Client: cpuUsage(rep.ClientCPU, float64(rx)/1024, 0), Server: cpuUsage(srv.CPU, float64(rx)/1024, 0)}
	return s, nil
}

// cpuUsage converts a side's CPU over the window into percentages and netperf's service demand:
// µs of (host-wide) CPU per KB transferred or per transaction.
func cpuUsage(c *control.CPU, kb, tx float64) *api.CPUUsage {
	if c == nil || c.WindowNs <= 0 {
		return nil
	}
	win := float64(c.WindowNs)
	user := float64(c.UserNs) / win * 100
	sys := float64(c.SystemNs) / win * 100
	u := &api.CPUUsage{ProcessPercent: new(user + sys), UserPercent: new(user), SystemPercent: new(sys)}
	if !c.HostMissing && c.HostTotal > 0 {
		host := c.HostBusy / c.HostTotal * 100
		u.HostPercent = new(host)
		cpuUs := host / 100 * float64(c.NumCPU) * win / 1e3
		if kb > 0 {
			u.ServiceDemandMicrosecondsPerKB = new(cpuUs / kb)
		}
		if tx > 0 {
			u.ServiceDemandMicrosecondsPerTransaction = new(cpuUs / tx)
		}
	}
	return u
}
