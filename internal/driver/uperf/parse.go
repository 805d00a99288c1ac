package uperf

import (
	"errors"
	"fmt"
	"math"
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

// SummaryLine is one line of uperf's default progress output (without -R; src/print.c
// print_summary): "Txn2      580.30M /   1.21(s) =     4.03Gb/s       30746op/s". Bytes are
// printed with binary prefixes (src/numbers.c decimal_to_string divides by 1024, and the
// 8-character field may cut the "B": "580.30M" is 580.30 MiB), the rate with decimal ones
// (divides by 1000: "4.03Gb/s" is 4.03e9 bit/s); op/s counts flowops.
type SummaryLine struct {
	Name       string
	Bytes      float64
	Seconds    float64
	BitsPerSec float64
	OpsPerSec  float64
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

// TxnStat is one row of the "Txn" table that -a prints (src/print.c, per group): the
// transaction's index in its group (0-based: Txn1 is the second transaction, whose progress
// lines are named Txn2), how many times it ran and the mean, max and min time of one run
// (one iteration: in an RR profile one write and one read, a round trip), as uperf timed them.
type TxnStat struct {
	Index               int
	Count               int64
	AvgNs, MaxNs, MinNs float64
}

// Result is a parsed uperf master output.
type Result struct {
	ProfileName string
	Threads     int
	Raw         []RawLine
	Summary     []SummaryLine // default output (no -R), last line per name
	Hosts       []HostStat    // slaves, then "master"
	Txns        []TxnStat     // -a's Txn table, every group's rows
	HasHistory  bool
	History     []HistoryRecord
	Messages    []string // error and warning lines
}

var (
	rawRE   = regexp.MustCompile(`^timestamp_ms:(` + toolkit.Decimal + `) name:(\S*) nr_bytes:(\d+) nr_ops:(\d+)$`)
	startRE = regexp.MustCompile(`^Starting (\d+) (?:threads|processes)(?:, (\d+) processes)? running profile:(\S+)`)
	// With -v a slave's line starts with its handshake's "[host] Success" (no newline between).
	hostRE    = regexp.MustCompile(`^(?:\[\S+\] Success)?(\S+)\s+[0-9.]+[nums]?s\s+\S+\s+\S+\s+(\d+)\s+(` + toolkit.Decimal + `)$`)
	txnRE     = regexp.MustCompile(`^Txn(\d+)\s+(\d+)\s+(\S+)\s+\S+\s+(\S+)\s+(\S+)$`)
	historyRE = regexp.MustCompile(`^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*$`)
	summaryRE = regexp.MustCompile(`^(Txn\d+|Total|Group\d+|Thr\d+)\s+(\S+)\s+/\s+(` + toolkit.Decimal + `)\(s\)\s+=\s+(\S+)\s+(` + toolkit.Decimal + `)op/s$`)
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
		if m := summaryRE.FindStringSubmatch(t); m != nil {
			l, err := summaryLine(m)
			if err != nil {
				return Result{}, err
			}
			r.Summary = append(r.Summary, l)
			continue
		}
		if m := txnRE.FindStringSubmatch(t); m != nil {
			x, err := txnStat(m)
			if err != nil {
				return Result{}, err
			}
			r.Txns = append(r.Txns, x)
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
	if len(r.Raw) == 0 && len(r.Summary) == 0 {
		if len(r.Messages) > 0 {
			return Result{}, fmt.Errorf("uperf: %s", strings.Join(r.Messages, " | "))
		}
		if t := toolkit.Tail(data, 3); t != "" {
			return Result{}, fmt.Errorf("uperf printed no progress lines: %s", t)
		}
		return Result{}, errors.New("uperf printed nothing on stdout")
	}
	return r, nil
}

// txnStat reads a Txn table row; uperf prints times with ns, us, ms or s.
func txnStat(m []string) (TxnStat, error) {
	x := TxnStat{}
	x.Index, _ = strconv.Atoi(m[1])
	x.Count, _ = strconv.ParseInt(m[2], 10, 64)
	for i, dst := range []*float64{&x.AvgNs, &x.MaxNs, &x.MinNs} {
		v, err := nanoseconds(m[3+i])
		if err != nil {
			return TxnStat{}, fmt.Errorf("uperf Txn table, row %q: %w", strings.Join(strings.Fields(m[0]), " "), err)
		}
		*dst = v
	}
	return x, nil
}

// nanoseconds reads a time uperf printed ("431.00ns", "24.83us", "18.42ms", "1.20s").
func nanoseconds(s string) (float64, error) {
	for _, u := range []struct {
		suffix string
		ns     float64
	}{{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}} {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			v, err := strconv.ParseFloat(num, 64)
			if err != nil || v < 0 {
				break
			}
			return v * u.ns, nil
		}
	}
	return 0, fmt.Errorf("%q is not a time (ns, us, ms or s)", s)
}

// txnLatency is the measured transaction's time per iteration from -a's Txn table (its rows
// of index 1, one per group, pooled by count): an RR transaction's iteration is one round
// trip, so its mean, min and max are uperf's own measurement. nil without the table.
func (r Result) txnLatency() *api.Latency {
	var n int64
	var sum float64
	minNs, maxNs := math.Inf(1), 0.0
	for _, x := range r.Txns {
		if x.Index != 1 || x.Count <= 0 {
			continue
		}
		n += x.Count
		sum += float64(x.Count) * x.AvgNs
		minNs = math.Min(minNs, x.MinNs)
		maxNs = math.Max(maxNs, x.MaxNs)
	}
	if n == 0 || sum <= 0 {
		return nil
	}
	return &api.Latency{
		Count:      toolkit.I(n),
		Mean:       toolkit.F(sum / float64(n) / 1e3),
		Min:        toolkit.F(minNs / 1e3),
		Max:        toolkit.F(maxNs / 1e3),
		Method:     "tool",
		Provenance: api.LatencyMeasured,
		Note: fmt.Sprintf("round trip as uperf timed it (-a Txn table): mean, min and max of %d iterations of the measured "+
			"transaction (a write and a read); uperf prints no percentiles (option history=true gives them)", n),
	}
}

// units: decimal_to_string's prefixes, in order.
const prefixes = " KMGTPEZ"

// quantity reads a number decimal_to_string printed: digits, an optional prefix, then the
// unit (B or b/s, possibly cut off by the field width). base is 1024 for bytes, 1000 for bits.
func quantity(s, unit string, base float64) (float64, error) {
	num := strings.TrimRight(s, "KMGTPEZBb/s")
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("uperf: %q is not a number of %s", s, unit)
	}
	rest := strings.TrimPrefix(s, num)
	if rest != "" {
		if i := strings.IndexByte(prefixes, rest[0]); i > 0 {
			v *= math.Pow(base, float64(i))
			rest = rest[1:]
		}
	}
	if rest != "" && !strings.HasPrefix(unit, rest) {
		return 0, fmt.Errorf("uperf: %q is not a number of %s", s, unit)
	}
	return v, nil
}

func summaryLine(m []string) (SummaryLine, error) {
	l := SummaryLine{Name: m[1]}
	var err error
	if l.Bytes, err = quantity(m[2], "B", 1024); err != nil {
		return l, err
	}
	if l.BitsPerSec, err = quantity(m[4], "b/s", 1000); err != nil {
		return l, err
	}
	l.Seconds, _ = strconv.ParseFloat(m[3], 64)
	l.OpsPerSec, _ = strconv.ParseFloat(m[5], 64)
	return l, nil
}

// summary returns the last default-output line of the named transaction.
func (r Result) summary(name string) (SummaryLine, bool) {
	for i := len(r.Summary) - 1; i >= 0; i-- {
		if r.Summary[i].Name == name {
			return r.Summary[i], true
		}
	}
	return SummaryLine{}, false
}

// window returns the measured transaction's (Txn2) bytes, operations and seconds. It starts
// at the last Txn1 line (printed as Txn2 is released) or, without one, the first Txn2 line,
// and its counts are those of the last Txn2 line. That line comes when uperf's master notices
// that the strands stopped, up to one interval after they did (src/master.c master_poll), so
// the seconds are the transaction's duration when the caller knows it (seconds > 0, what
// cnperf's profile asked for) and the lines span at least that; otherwise (an imported output)
// the span, as uperf's own summary computes it. Without -R, the default output's Txn2 line.
func (r Result) window(seconds float64) (bytes, ops int64, secs float64, note string, err error) {
	if len(r.Raw) == 0 {
		l, ok := r.summary("Txn2")
		if !ok || l.Seconds <= 0 {
			return 0, 0, 0, "", errors.New("uperf printed no summary line for the measured transaction (Txn2): it never started")
		}
		note = fmt.Sprintf("uperf's default output: Txn2 moved %.6g bytes (binary prefixes) in %.2f s at %.6g bit/s, %.0f flowops/s as it printed them", l.Bytes, l.Seconds, l.BitsPerSec, l.OpsPerSec)
		return int64(math.Round(l.Bytes)), int64(math.Round(l.OpsPerSec * l.Seconds)), l.Seconds, note, nil
	}
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
		return 0, 0, 0, "", errors.New("uperf printed no progress line for the measured transaction (Txn2): it never started")
	}
	last := txn2[len(txn2)-1]
	first := RawLine{TimestampMs: startMs}
	if startMs == 0 || startMs > txn2[0].TimestampMs {
		if len(txn2) < 2 {
			return 0, 0, 0, "", errors.New("uperf printed a single progress line for the measured transaction: no window to measure")
		}
		first = txn2[0]
	}
	span := (last.TimestampMs - first.TimestampMs) / 1000
	if span <= 0 {
		return 0, 0, 0, "", fmt.Errorf("uperf progress lines span %.3f s", span)
	}
	secs = span
	if seconds > 0 && span >= seconds*0.999 {
		secs = seconds
		note = fmt.Sprintf("rate over the transaction's %g s (uperf's last progress line came %.3f s after its start)", seconds, span)
	} else if seconds <= 0 {
		note = "rate over the span of uperf's progress lines, as uperf's own summary: its last line comes up to one interval after the transaction ended"
	}
	return last.Bytes - first.Bytes, last.Ops - first.Ops, secs, note, nil
}

// ToSample turns the output of a run of profile p with the given threads into a sample;
// seconds is the measured transaction's duration when known, else 0 (see window); req and
// resp are TCP_STREAM_LAT's message and small-message sizes (unused by other profiles).
func (r Result) ToSample(p api.Profile, threads int, seconds float64, req, resp int) (api.Sample, error) {
	if len(r.Messages) > 0 {
		return api.Sample{}, fmt.Errorf("uperf: %s", strings.Join(r.Messages, " | "))
	}
	bytes, ops, secs, wnote, err := r.window(seconds)
	if err != nil {
		return api.Sample{}, err
	}
	if ops <= 0 {
		return api.Sample{}, fmt.Errorf("uperf completed no operations in %.3f s", secs)
	}
	s := api.Sample{DurationSeconds: secs}
	toolkit.AddNote(&s, wnote)
	if p == api.TCPStreamLat {
		return r.streamLatSample(s, bytes, ops, secs, req, resp)
	}
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
			s.Latency = h.Latency()
			toolkit.AddNote(&s, fmt.Sprintf("latency of %d transactions from uperf's per-flowop history (-X): write start to read end", n))
		} else if l := r.txnLatency(); l != nil {
			s.Latency = l
		} else {
			if threads < 1 {
				threads = 1
			}
			s.Latency = &api.Latency{
				Mean:       toolkit.F(float64(threads) / tps * 1e6),
				Method:     "rate-derived",
				Provenance: api.LatencyDerived,
				Note: fmt.Sprintf("DERIVED, not measured: mean round trip = %d thread(s) ÷ transaction rate (one transaction "+
					"in flight per thread; the output has no -a Txn table); no percentiles without per-transaction data "+
					"(option history=true)", threads),
			}
		}
		return s, nil
	}
	if bytes <= 0 {
		return api.Sample{}, fmt.Errorf("uperf moved no data in %.3f s", secs)
	}
	bps := float64(bytes) * 8 / secs
	if l, ok := r.summary("Txn2"); ok && len(r.Raw) == 0 {
		bps = l.BitsPerSec // the tool's figure (3 significant digits)
	}
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

// streamLatSample is TCP_STREAM_LAT's sample (k8s-netperf's profile): each transaction is
// StreamLatCount writes of req bytes and as many reads of resp bytes the slave writes back.
// uperf counts flowops and the bytes of both directions: the stream's throughput is the bytes
// written, the transactions are flowops ÷ 2·StreamLatCount, and the latency is uperf's own time
// per transaction (-a Txn table: mean, min, max; k8s-netperf's uperf-histogram build adds
// percentiles, stock uperf 1.0.8 prints none).
func (r Result) streamLatSample(s api.Sample, bytes, ops int64, secs float64, req, resp int) (api.Sample, error) {
	if bytes <= 0 {
		return api.Sample{}, fmt.Errorf("uperf moved no data in %.3f s", secs)
	}
	tx := ops / (2 * StreamLatCount)
	written := float64(bytes)
	if req > 0 && resp > 0 {
		written = float64(bytes) * float64(req) / float64(req+resp)
		toolkit.AddNote(&s, fmt.Sprintf("TCP_STREAM_LAT as k8s-netperf runs it with uperf: throughput of the %d-byte writes "+
			"(uperf's byte count × %d/(%d+%d): it counts both directions)", req, req, req, resp))
	} else {
		toolkit.AddNote(&s, "TCP_STREAM_LAT as k8s-netperf runs it with uperf: the output does not say the message sizes, so "+
			"the throughput is uperf's byte count, both directions (the small messages back are a sliver of it)")
	}
	s.BytesSent = toolkit.I(int64(math.Round(written)))
	s.ThroughputBitsPerSecond = toolkit.F(written * 8 / secs)
	s.Transactions = toolkit.I(tx)
	s.TransactionsPerSecond = toolkit.F(float64(tx) / secs)
	if l := r.txnLatency(); l != nil {
		l.Note = fmt.Sprintf("time of one transaction as uperf timed it (-a Txn table): %d writes of the message, then %d "+
			"reads of the small message the slave writes back; mean, min and max of %d transactions (stock uperf prints no "+
			"percentiles)", StreamLatCount, StreamLatCount, *l.Count)
		s.Latency = l
	}
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
		// The records carry no flowop type (src/stats.c history_record: NSTAT_FLOWOP): by
		// position, cnperf's profile has a connect first and a disconnect last, and a
		// transaction cut by the end of its duration leaves a write without its read.
		if len(rs) < 4 {
			return nil, 0, fmt.Errorf("uperf history: thread %d has %d flowop records, not a connect, write/read pairs and a disconnect", k.tid, len(rs))
		}
		rs = rs[1 : len(rs)-1]
		if len(rs)%2 != 0 {
			rs = rs[:len(rs)-1]
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
