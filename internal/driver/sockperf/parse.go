package sockperf

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver/toolkit"
)

// Result is one parsed sockperf client run (sockperf 3.x output).
type Result struct {
	// Protocol is "TCP" or "UDP" from the "[ 0] IP = ... PORT = ... # TCP" line, or "" (a
	// --full-log file has no such line).
	Protocol string
	// Throughput is true for a throughput run, false for ping-pong / under-load.
	Throughput bool

	// TotalRunSeconds is the whole run ([Total Run] RunTime=), about the -t asked for.
	TotalRunSeconds float64
	// Latency runs ([Valid Duration] line and the statistics after it), in µs as printed.
	ValidSeconds float64
	Sent         int64
	Received     int64
	// FullRTT is true when sockperf printed round-trip times ("avg-rtt"), false when it
	// printed RTT/2 ("avg-latency").
	FullRTT      bool
	Burst        int
	Avg, Stddev  float64
	Observations int64
	Min, Max     float64
	Percentiles  map[string]float64 // "50.000" → value
	Dropped      int64
	Duplicated   int64
	OutOfOrder   int64

	// Throughput runs.
	TotalSent    int64
	TotalSeconds float64
	MessageRate  float64
	// MessageSize is the --msg-size sockperf used: from a throughput run's "using msg-size="
	// note or a --full-log file's parameters line; 0 when the output does not say (a
	// ping-pong or under-load report on stdout).
	MessageSize     int
	BandwidthMiBps  float64
	haveMessageRate bool
}

var (
	ansiRE  = regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")
	errorRE = regexp.MustCompile(`(?i)sockperf: ERROR: (.*)`)
	protoRE = regexp.MustCompile(`PORT\s*=\s*\d+\s*#\s*(TCP|UDP)`)
	totalRE = regexp.MustCompile(`\[Total Run\] RunTime=(` + toolkit.Decimal + `) sec`)
	validRE = regexp.MustCompile(`\[Valid Duration\] RunTime=(` + toolkit.Decimal + `) sec; SentMessages=(\d+); ReceivedMessages=(\d+)`)
	// 3.7: "avg-rtt=30.960 (std-dev=8.776)"; 3.10 adds fields after the std-dev: "(std-dev=289.452,
	// mean-ad=55.220, …)".
	avgRE     = regexp.MustCompile(`====> avg-(rtt|latency)=(` + toolkit.Decimal + `) \(std-dev=(` + toolkit.Decimal + `)[,)]`)
	burstRE   = regexp.MustCompile(`Round trip of burst of (\d+) messages`)
	dropRE    = regexp.MustCompile(`# dropped messages = (\d+); # duplicated messages = (\d+); # out-of-order messages = (\d+)`)
	obsRE     = regexp.MustCompile(`Total (\d+) observations`)
	pctRE     = regexp.MustCompile(`(?m)---> percentile (` + toolkit.Decimal + `) =\s*(` + toolkit.Decimal + `)\s*$`)
	maxRE     = regexp.MustCompile(`(?m)---> <MAX> observation =\s*(` + toolkit.Decimal + `)\s*$`)
	minRE     = regexp.MustCompile(`(?m)---> <MIN> observation =\s*(` + toolkit.Decimal + `)\s*$`)
	totalTPRE = regexp.MustCompile(`Total of (\d+) messages sent in (` + toolkit.Decimal + `) sec`)
	rateRE    = regexp.MustCompile(`Summary: Message Rate is (\d+) \[msg/sec\]`)
	bwRE      = regexp.MustCompile(`Summary: BandWidth is (` + toolkit.Decimal + `) MBps`)
	msgSizeRE = regexp.MustCompile(`using msg-size=(\d+)`)
	// "test was performed using the following parameters: --mps=... --msg-size=64 ...": the
	// first lines of a --full-log file (a report on stdout has no such line).
	paramSizeRE = regexp.MustCompile(`following parameters:.*--msg-size=(\d+)`)
	noReplyMsg  = "No messages were received from the server"
)

// ParseOutput parses a sockperf client's stdout (and stderr, for errors).
func ParseOutput(stdout, stderr []byte) (Result, error) {
	text := ansiRE.ReplaceAllString(toolkit.Text(stdout), "")
	errText := ansiRE.ReplaceAllString(toolkit.Text(stderr), "")
	for _, t := range []string{text, errText} {
		if m := errorRE.FindStringSubmatch(t); m != nil {
			return Result{}, fmt.Errorf("sockperf: %s", strings.TrimSpace(m[1]))
		}
		if i := strings.Index(t, noReplyMsg); i >= 0 {
			line := t[i:]
			if j := strings.IndexByte(line, '\n'); j >= 0 {
				line = line[:j]
			}
			return Result{}, fmt.Errorf("sockperf: %s", strings.TrimSpace(line))
		}
	}
	var r Result
	if m := protoRE.FindStringSubmatch(text); m != nil {
		r.Protocol = m[1]
	}
	if m := paramSizeRE.FindStringSubmatch(text); m != nil {
		r.MessageSize, _ = strconv.Atoi(m[1])
	}
	if m := rateRE.FindStringSubmatch(text); m != nil {
		r.Throughput = true
		r.haveMessageRate = true
		r.MessageRate, _ = strconv.ParseFloat(m[1], 64)
		if m := totalTPRE.FindStringSubmatch(text); m != nil {
			r.TotalSent, _ = strconv.ParseInt(m[1], 10, 64)
			r.TotalSeconds, _ = strconv.ParseFloat(m[2], 64)
		}
		if m := bwRE.FindStringSubmatch(text); m != nil {
			r.BandwidthMiBps, _ = strconv.ParseFloat(m[1], 64)
		}
		if m := msgSizeRE.FindStringSubmatch(text); m != nil {
			r.MessageSize, _ = strconv.Atoi(m[1])
		}
		return r, nil
	}
	m := validRE.FindStringSubmatch(text)
	if m == nil {
		if strings.Contains(text, "Test ended") || strings.Contains(text, "Starting test") {
			return Result{}, fmt.Errorf("sockperf output has no statistics (cut short?): %s", toolkit.Tail([]byte(text), 2))
		}
		return Result{}, fmt.Errorf("sockperf output is not a client report: %s", toolkit.Tail([]byte(text), 3))
	}
	r.ValidSeconds, _ = strconv.ParseFloat(m[1], 64)
	if t := totalRE.FindStringSubmatch(text); t != nil {
		r.TotalRunSeconds, _ = strconv.ParseFloat(t[1], 64)
	}
	r.Sent, _ = strconv.ParseInt(m[2], 10, 64)
	r.Received, _ = strconv.ParseInt(m[3], 10, 64)
	a := avgRE.FindStringSubmatch(text)
	if a == nil {
		return Result{}, errors.New("sockperf output has no avg-rtt/avg-latency line (cut short?)")
	}
	r.FullRTT = a[1] == "rtt"
	r.Avg, _ = strconv.ParseFloat(a[2], 64)
	r.Stddev, _ = strconv.ParseFloat(a[3], 64)
	if b := burstRE.FindStringSubmatch(text); b != nil {
		r.Burst, _ = strconv.Atoi(b[1])
	}
	if d := dropRE.FindStringSubmatch(text); d != nil {
		r.Dropped, _ = strconv.ParseInt(d[1], 10, 64)
		r.Duplicated, _ = strconv.ParseInt(d[2], 10, 64)
		r.OutOfOrder, _ = strconv.ParseInt(d[3], 10, 64)
	}
	if o := obsRE.FindStringSubmatch(text); o != nil {
		r.Observations, _ = strconv.ParseInt(o[1], 10, 64)
	}
	r.Percentiles = map[string]float64{}
	for _, p := range pctRE.FindAllStringSubmatch(text, -1) {
		v, _ := strconv.ParseFloat(p[2], 64)
		r.Percentiles[p[1]] = v
	}
	mx, mn := maxRE.FindStringSubmatch(text), minRE.FindStringSubmatch(text)
	if mx == nil || mn == nil || r.Observations == 0 {
		return Result{}, errors.New("sockperf output has no percentile table (cut short?)")
	}
	r.Max, _ = strconv.ParseFloat(mx[1], 64)
	r.Min, _ = strconv.ParseFloat(mn[1], 64)
	return r, nil
}

// ToSample turns the result into a sample. caseSize is the -m the case asked for (0: the
// tool's default); mode is the sockperf mode that ran.
func (r Result) ToSample(caseSize int, mode string) (api.Sample, error) {
	if r.Throughput {
		return r.throughputSample(caseSize)
	}
	if r.Received <= 0 || r.ValidSeconds <= 0 {
		return api.Sample{}, fmt.Errorf("sockperf received no replies in its measured window (%d sent)", r.Sent)
	}
	k := 1.0
	lat := &api.Latency{Method: "tool", Provenance: api.LatencyMeasured}
	if !r.FullRTT {
		k = 2
		lat.Method = "tool-rtt-from-one-way"
		lat.Note = "sockperf printed RTT/2 (no --full-rtt); every figure doubled to round-trip"
	}
	f := func(v float64) *float64 { return toolkit.F(v * k) }
	lat.Count = toolkit.I(r.Observations)
	lat.Mean, lat.Stddev, lat.Min, lat.Max = f(r.Avg), f(r.Stddev), f(r.Min), f(r.Max)
	set := func(key string, dst **float64) {
		if v, ok := r.Percentiles[key]; ok {
			*dst = f(v)
		}
	}
	set("50.000", &lat.P50)
	set("75.000", &lat.P75)
	set("90.000", &lat.P90)
	set("99.000", &lat.P99)
	set("99.900", &lat.P999)
	set("99.990", &lat.P9999)
	if v, ok := r.Percentiles["99.999"]; ok {
		lat.Note = joinNote(lat.Note, fmt.Sprintf("p99.999 = %.3f µs", v*k))
	}
	if r.Observations < 1000000 {
		lat.Note = joinNote(lat.Note, fmt.Sprintf("%d observations: percentiles above p%s rest on fewer than 10 transactions",
			r.Observations, tailPercentile(r.Observations)))
	}
	s := api.Sample{
		DurationSeconds: r.ValidSeconds,
		Latency:         lat,
		Transactions:    toolkit.I(r.Received),
		PacketsSent:     toolkit.I(r.Sent),
		PacketsReceived: toolkit.I(r.Received),
	}
	if r.Burst > 1 {
		lat.Note = joinNote(lat.Note, fmt.Sprintf("each observation is the round trip of a burst of %d messages", r.Burst))
	}
	switch mode {
	case ModeUnderLoad:
		// The client sends at a fixed rate and the server answers a sample of the messages:
		// the rate is what was offered, and latency is that of the answered messages.
		s.PacketsPerSecond = toolkit.F(float64(r.Sent) / r.ValidSeconds)
		toolkit.AddNote(&s, fmt.Sprintf("under-load: %d messages sent, %d answered and timed", r.Sent, r.Received))
	default:
		s.TransactionsPerSecond = toolkit.F(float64(r.Received) / r.ValidSeconds)
		if r.Dropped > 0 && r.Sent > 0 {
			s.PacketsLost = toolkit.I(r.Dropped)
			s.LossPercent = toolkit.F(100 * float64(r.Dropped) / float64(r.Sent))
		}
	}
	toolkit.AddNote(&s, fmt.Sprintf("sockperf measured %.3f s after its warm-up (its [Valid Duration])", r.ValidSeconds))
	return s, nil
}

func (r Result) throughputSample(caseSize int) (api.Sample, error) {
	size := r.MessageSize
	if size == 0 {
		size = caseSize
	}
	if !r.haveMessageRate || r.MessageRate <= 0 {
		return api.Sample{}, fmt.Errorf("sockperf reported no message rate (%d messages sent)", r.TotalSent)
	}
	s := api.Sample{DurationSeconds: r.TotalSeconds}
	if r.TotalSent > 0 {
		s.PacketsSent = toolkit.I(r.TotalSent)
	}
	if size > 0 {
		s.ThroughputBitsPerSecond = toolkit.F(r.MessageRate * float64(size) * 8)
		s.BytesSent = toolkit.I(r.TotalSent * int64(size))
	} else if r.BandwidthMiBps > 0 {
		// sockperf's "MBps" is MiB/s (and its "Mbps" Mibit/s).
		s.ThroughputBitsPerSecond = toolkit.F(r.BandwidthMiBps * 1024 * 1024 * 8)
		toolkit.AddNote(&s, "throughput from sockperf's MBps figure (MiB/s, 3 decimals): message size unknown")
	} else {
		return api.Sample{}, errors.New("sockperf throughput output has neither a message size nor a bandwidth")
	}
	if r.Protocol == "UDP" {
		s.PacketsPerSecond = toolkit.F(r.MessageRate)
	}
	toolkit.AddNote(&s, "sockperf throughput mode reports the client's send rate; what the server received (and UDP loss) is not measured")
	return s, nil
}

func tailPercentile(n int64) string {
	switch {
	case n >= 100000:
		return "99.99"
	case n >= 10000:
		return "99.9"
	case n >= 1000:
		return "99"
	default:
		return "90"
	}
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
