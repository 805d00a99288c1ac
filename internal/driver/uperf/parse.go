package uperf

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver/toolkit"
	"github.com/cnperf/cnperf/internal/stats/hdr"
)

// RawLine is one -R progress line (uperf src/print.c print_summary):
// "timestamp_ms:%.4f name:%s nr_bytes:%PRIu64 nr_ops:%PRIu64". Bytes and ops are cumulative
// since the named transaction started.
type RawLine struct {
	TimestampMs float64
	Name        string
	Bytes       int64
	Ops         int64
}

// HostStat is one line of the "Run Statistics" table (src/print.c print_goodbye_stat):
// the operations count is exact; time, data and throughput are rounded for humans.
type HostStat struct {
	Host       string
	Operations int64
	ErrorPct   float64
}

// HistoryRecord is one -X line (src/stats.c flush_history): "%6d %6d %2d %15lld %15lld"
// = pid, thread id, record type, flowop end time (ns), flowop duration (ns).
type HistoryRecord struct {
	PID, TID, Type int64
	EndNs, DeltaNs int64
}

// Result is a parsed uperf master output.
type Result struct {
	ProfileName string
	Threads     int
	Raw         []RawLine
	Hosts       []HostStat // slaves, then "master"
	HasHistory  bool
	History     []HistoryRecord
	Messages    []string // error and warning lines
}

var (
	rawRE     = regexp.MustCompile(`^timestamp_ms:([0-9.]+) name:(\S*) nr_bytes:(\d+) nr_ops:(\d+)$`)
	startRE   = regexp.MustCompile(`^Starting (\d+) (?:threads|processes)(?:, (\d+) processes)? running profile:(\S+)`)
	hostRE    = regexp.MustCompile(`^(\S+)\s+[0-9.]+[nums]?s\s+\S+\s+\S+\s+(\d+)\s+([0-9.]+)$`)
	historyRE = regexp.MustCompile(`^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*$`)
	errorRE   = regexp.MustCompile(`(?i)(error|abort|fail|cannot|refused|timed out|warning: errors)`)
)

// ParseOutput parses what the client command printed: uperf's output, then optionally the
// history after HistoryMarker.
func ParseOutput(data []byte) (Result, error) {
	text := strings.ReplaceAll(toolkit.Text(data), "\r", "\n")
	var r Result
	inHistory := false
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if t == "" {
			continue
		}
		if t == HistoryMarker {
			inHistory, r.HasHistory = true, true
			continue
		}
		if inHistory {
			m := historyRE.FindStringSubmatch(t)
			if m == nil {
				return Result{}, fmt.Errorf("uperf history: bad line %q", t)
			}
			var h HistoryRecord
			nums := []*int64{&h.PID, &h.TID, &h.Type, &h.EndNs, &h.DeltaNs}
			for i, p := range nums {
				*p, _ = strconv.ParseInt(m[i+1], 10, 64)
			}
			r.History = append(r.History, h)
			continue
		}
		if m := rawRE.FindStringSubmatch(t); m != nil {
			ts, _ := strconv.ParseFloat(m[1], 64)
			b, _ := strconv.ParseInt(m[3], 10, 64)
			o, _ := strconv.ParseInt(m[4], 10, 64)
			r.Raw = append(r.Raw, RawLine{TimestampMs: ts, Name: m[2], Bytes: b, Ops: o})
			continue
		}
		if m := startRE.FindStringSubmatch(t); m != nil {
			n, _ := strconv.Atoi(m[1])
			if m[2] != "" {
				k, _ := strconv.Atoi(m[2])
				n += k
			}
			r.Threads, r.ProfileName = n, m[3]
			continue
		}
		if m := hostRE.FindStringSubmatch(t); m != nil && !strings.HasPrefix(t, "Difference") {
			ops, _ := strconv.ParseInt(m[2], 10, 64)
			e, _ := strconv.ParseFloat(m[3], 64)
			r.Hosts = append(r.Hosts, HostStat{Host: m[1], Operations: ops, ErrorPct: e})
			continue
		}
		if errorRE.MatchString(t) && !strings.HasPrefix(t, "Error Statistics") && !strings.HasPrefix(t, "Hostname") {
			r.Messages = append(r.Messages, t)
		}
	}
	if len(r.Raw) == 0 {
		if len(r.Messages) > 0 {
			return Result{}, fmt.Errorf("uperf: %s", strings.Join(r.Messages, " | "))
		}
		if t := toolkit.Tail(data, 3); t != "" {
			return Result{}, fmt.Errorf("uperf printed no -R progress lines: %s", t)
		}
		return Result{}, errors.New("uperf printed nothing on stdout")
	}
	return r, nil
}

// window returns the measured transaction's (Txn2) bytes, operations and seconds: from the
// last Txn1 line (printed when Txn2 starts) or the first Txn2 line, to the last Txn2 line.
func (r Result) window() (bytes, ops int64, seconds float64, err error) {
	var txn2 []RawLine
	var startMs float64
	for _, l := range r.Raw {
		switch l.Name {
		case "Txn2":
			txn2 = append(txn2, l)
		case "Txn1":
			startMs = l.TimestampMs
		}
	}
	sort.SliceStable(txn2, func(i, j int) bool { return txn2[i].TimestampMs < txn2[j].TimestampMs })
	if len(txn2) == 0 {
		return 0, 0, 0, errors.New("uperf printed no progress line for the measured transaction (Txn2): it never started")
	}
	last := txn2[len(txn2)-1]
	first := RawLine{TimestampMs: startMs}
	if startMs == 0 || startMs > txn2[0].TimestampMs {
		if len(txn2) < 2 {
			return 0, 0, 0, errors.New("uperf printed a single progress line for the measured transaction: no window to measure")
		}
		first = txn2[0]
	}
	seconds = (last.TimestampMs - first.TimestampMs) / 1000
	if seconds <= 0 {
		return 0, 0, 0, fmt.Errorf("uperf progress lines span %.3f s", seconds)
	}
	return last.Bytes - first.Bytes, last.Ops - first.Ops, seconds, nil
}

// ToSample turns the output of a run of profile p with the given threads into a sample.
func (r Result) ToSample(p api.Profile, threads int) (api.Sample, error) {
	if len(r.Messages) > 0 {
		return api.Sample{}, fmt.Errorf("uperf: %s", strings.Join(r.Messages, " | "))
	}
	bytes, ops, secs, err := r.window()
	if err != nil {
		return api.Sample{}, err
	}
	if ops <= 0 {
		return api.Sample{}, fmt.Errorf("uperf completed no operations in %.3f s", secs)
	}
	s := api.Sample{DurationSeconds: secs}
	if p.IsRR() {
		// Every transaction is a write and a read flowop; uperf counts flowops.
		tx := ops / 2
		tps := float64(tx) / secs
		s.TransactionsPerSecond = toolkit.F(tps)
		s.Transactions = toolkit.I(tx)
		if r.HasHistory {
			h, n, err := historyHistogram(r.History)
			if err != nil {
				return api.Sample{}, err
			}
			s.Histogram = h.ToAPI()
			s.Latency = latencyFrom(h)
			toolkit.AddNote(&s, fmt.Sprintf("latency of %d transactions from uperf's per-flowop history (-X): write start to read end", n))
		} else {
			if threads < 1 {
				threads = 1
			}
			s.Latency = &api.Latency{
				Mean:   toolkit.F(float64(threads) / tps * 1e6),
				Method: "rate-derived",
				Note: fmt.Sprintf("mean round trip = %d thread(s) ÷ transaction rate (one transaction in flight per thread); "+
					"no percentiles without per-transaction data (option history=true)", threads),
			}
		}
		return s, nil
	}
	if bytes <= 0 {
		return api.Sample{}, fmt.Errorf("uperf moved no data in %.3f s", secs)
	}
	bps := float64(bytes) * 8 / secs
	switch p {
	case api.TCPMaerts:
		s.BytesReceived = toolkit.I(bytes)
		toolkit.AddNote(&s, "throughput as received by uperf's master")
	case api.UDPStream:
		s.BytesSent = toolkit.I(bytes)
		s.PacketsSent = toolkit.I(ops)
		master, slaves, ok := r.opsSplit()
		if ok && master > 0 {
			// The Run Statistics table counts every operation of the run on each side; the
			// fraction the slave received applies to the measured window.
			frac := float64(slaves) / float64(master)
			if frac > 1 {
				frac = 1
			}
			bps *= frac
			got := int64(float64(ops) * frac)
			s.PacketsReceived = toolkit.I(got)
			s.PacketsLost = toolkit.I(ops - got)
			s.LossPercent = toolkit.F(100 * (1 - frac))
			s.PacketsPerSecond = toolkit.F(float64(got) / secs)
			toolkit.AddNote(&s, fmt.Sprintf("UDP received rate = sent rate × %d/%d operations the slave/master counted (Run Statistics)", slaves, master))
		} else {
			toolkit.AddNote(&s, "UDP rate as SENT by uperf's master: no Run Statistics to tell what the slave received")
		}
	default:
		s.BytesSent = toolkit.I(bytes)
		toolkit.AddNote(&s, "throughput as sent by uperf's master (TCP: what the slave received, minus the last in-flight window)")
	}
	s.ThroughputBitsPerSecond = toolkit.F(bps)
	return s, nil
}

// opsSplit returns the master's and the slaves' operation counts from Run Statistics.
func (r Result) opsSplit() (master, slaves int64, ok bool) {
	var haveM, haveS bool
	for _, h := range r.Hosts {
		switch h.Host {
		case "master":
			master, haveM = h.Operations, true
		case "Total":
		default:
			slaves += h.Operations
			haveS = true
		}
	}
	return master, slaves, haveM && haveS
}

// historyHistogram pairs each strand's write and read records into transactions. Per strand
// the records are, in order: connect, (write, read) per transaction, disconnect.
func historyHistogram(recs []HistoryRecord) (*hdr.Histogram, int, error) {
	type key struct{ pid, tid int64 }
	var order []key
	byStrand := map[key][]HistoryRecord{}
	for _, r := range recs {
		k := key{r.PID, r.TID}
		if _, ok := byStrand[k]; !ok {
			order = append(order, k)
		}
		byStrand[k] = append(byStrand[k], r)
	}
	h := hdr.New()
	n := 0
	for _, k := range order {
		rs := byStrand[k]
		if len(rs) >= 4 && len(rs)%2 == 0 {
			rs = rs[1 : len(rs)-1] // connect and disconnect
		}
		if len(rs)%2 != 0 {
			return nil, 0, fmt.Errorf("uperf history: thread %d has %d flowop records, not write/read pairs", k.tid, len(rs))
		}
		for i := 0; i+1 < len(rs); i += 2 {
			w, rd := rs[i], rs[i+1]
			start := w.EndNs - w.DeltaNs
			rtt := rd.EndNs - start
			if rtt <= 0 || rd.EndNs < w.EndNs {
				return nil, 0, fmt.Errorf("uperf history: thread %d record %d: read ends before its write (%d < %d)", k.tid, i+1, rd.EndNs, w.EndNs)
			}
			h.Record(rtt)
			n++
		}
	}
	if n == 0 {
		return nil, 0, errors.New("uperf history holds no transaction")
	}
	return h, n, nil
}

func latencyFrom(h *hdr.Histogram) *api.Latency {
	us := func(ns float64) *float64 { return toolkit.F(ns / 1000) }
	q := func(p float64) *float64 { return us(float64(h.Quantile(p))) }
	count := h.Count()
	return &api.Latency{
		Count:  &count,
		Mean:   us(h.Mean()),
		Min:    us(float64(h.Min())),
		Max:    us(float64(h.Max())),
		Stddev: us(h.Stddev()),
		P50:    q(0.50),
		P75:    q(0.75),
		P90:    q(0.90),
		P99:    q(0.99),
		P999:   q(0.999),
		P9999:  q(0.9999),
		Method: "histogram",
	}
}
