package netperf

import (
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver/toolkit"
)

// Result is one netperf test's output: the output selectors it printed (by selector name,
// e.g. "THROUGHPUT"), the banner when there was one, and any other lines.
type Result struct {
	Values map[string]string
	Banner string
	Other  []string
	// Headerless is true for a classic table printed with -P 0 (no banner, no units line).
	Headerless bool
	// Notes are the parser's remarks for the sample.
	Notes []string
}

var (
	keyvalRE = regexp.MustCompile(`^([A-Z][A-Z0-9_]*)=(.*)$`)
	bannerRE = regexp.MustCompile(`^(MIGRATED |OMNI )?.*TEST( from .*)?`)
	// failure lines netperf prints (netlib.c establish_control, send_omni_inner, ...)
	failureRE = regexp.MustCompile(`(?i)(establish[ _]control|are you sure there is a netserver|could not|cannot|failed|error|unable|refused|timed out|invalid|not compiled|usage:)`)
)

// ParseKeyval parses netperf's keyval output (test-specific -k; netperf manual, "Omni Output
// Selection"): one KEY=value line per output selector, optionally after a banner line.
func ParseKeyval(data []byte) (Result, error) {
	text := strings.ReplaceAll(toolkit.Text(data), "\r", "")
	r := Result{Values: map[string]string{}}
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if t == "" {
			continue
		}
		if m := keyvalRE.FindStringSubmatch(t); m != nil {
			r.Values[m[1]] = strings.TrimSpace(m[2])
			continue
		}
		if r.Banner == "" && len(r.Values) == 0 && strings.Contains(t, " TEST") && bannerRE.MatchString(t) {
			r.Banner = t
			continue
		}
		r.Other = append(r.Other, t)
	}
	if err := r.failure(); err != nil {
		return Result{}, err
	}
	return r, nil
}

// failure turns an output without results, or with netperf's error lines, into an error
// carrying netperf's own words.
func (r Result) failure() error {
	var bad []string
	for _, l := range r.Other {
		if failureRE.MatchString(l) {
			bad = append(bad, l)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("netperf: %s", strings.Join(bad, " | "))
	}
	if len(r.Values) == 0 {
		if len(r.Other) > 0 {
			return fmt.Errorf("netperf output has no results: %s", toolkit.Tail([]byte(strings.Join(r.Other, "\n")), 3))
		}
		if r.Banner != "" {
			return fmt.Errorf("netperf printed its banner and no results (cut short?): %s", r.Banner)
		}
		return errors.New("netperf printed nothing")
	}
	return nil
}

// csvTitles maps the column titles netperf prints above -o CSV output (the joined lines of
// netperf_output_source[].line[] in nettest_omni.c) to output selector names.
var csvTitles = map[string]string{
	"throughput":                           "THROUGHPUT",
	"throughput units":                     "THROUGHPUT_UNITS",
	"transaction rate tran/s":              "TRANSACTION_RATE",
	"round trip latency usec/tran":         "RT_LATENCY",
	"minimum latency microseconds":         "MIN_LATENCY",
	"maximum latency microseconds":         "MAX_LATENCY",
	"mean latency microseconds":            "MEAN_LATENCY",
	"stddev latency microseconds":          "STDDEV_LATENCY",
	"50th percentile latency microseconds": "P50_LATENCY",
	"90th percentile latency microseconds": "P90_LATENCY",
	"99th percentile latency microseconds": "P99_LATENCY",
	"elapsed time (sec)":                   "ELAPSED_TIME",
	"local cpu util %":                     "LOCAL_CPU_UTIL",
	"remote cpu util %":                    "REMOTE_CPU_UTIL",
	"local transport retransmissions":      "LOCAL_TRANSPORT_RETRANS",
	"remote transport retransmissions":     "REMOTE_TRANSPORT_RETRANS",
	"local send throughput":                "LOCAL_SEND_THROUGHPUT",
	"local recv throughput":                "LOCAL_RECV_THROUGHPUT",
	"remote send throughput":               "REMOTE_SEND_THROUGHPUT",
	"remote recv throughput":               "REMOTE_RECV_THROUGHPUT",
	"request size bytes":                   "REQUEST_SIZE",
	"response size bytes":                  "RESPONSE_SIZE",
	"initial burst requests":               "BURST_SIZE",
	"local send size":                      "LOCAL_SEND_SIZE",
	"remote send size":                     "REMOTE_SEND_SIZE",
	"protocol":                             "PROTOCOL",
	"direction":                            "DIRECTION",
}

// ParseHuman parses netperf's -O output (the omni tests' human-readable form: a banner unless
// -P 0, the column titles stacked over several lines, one line of values). netperf pads every
// column to one width and starts each title word and value at the column's start
// (nettest_omni.c print_omni_human), so the values line's tokens give the columns and the
// title lines sliced at those positions give each column's title, the -o CSV title.
func ParseHuman(data []byte) (Result, error) {
	text := strings.ReplaceAll(toolkit.Text(data), "\r", "")
	r := Result{Values: map[string]string{}}
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(l)
		switch {
		case t == "":
		case r.Banner == "" && len(lines) == 0 && strings.Contains(t, " TEST") && bannerRE.MatchString(t):
			r.Banner = t
		default:
			lines = append(lines, strings.TrimRight(l, " \t"))
		}
	}
	if len(lines) < 2 {
		return Result{}, errors.New("netperf -O output: no column titles over a line of values")
	}
	vals := lines[len(lines)-1]
	var starts []int
	for i := range vals {
		if vals[i] != ' ' && (i == 0 || vals[i-1] == ' ') {
			starts = append(starts, i)
		}
	}
	titles := make([][]string, len(starts))
	for _, l := range lines[:len(lines)-1] {
		for j, st := range starts {
			end := len(l)
			if j+1 < len(starts) && starts[j+1] < end {
				end = starts[j+1]
			}
			if st < end {
				if w := strings.TrimSpace(l[st:end]); w != "" {
					titles[j] = append(titles[j], w)
				}
			}
		}
	}
	known := false
	for j, st := range starts {
		end := len(vals)
		if j+1 < len(starts) {
			end = starts[j+1]
		}
		key := columnKey(strings.Join(titles[j], " "))
		if _, ok := titleKeys[key]; ok {
			known = true
		}
		r.Values[key] = strings.TrimSpace(vals[st:end])
	}
	if !known {
		return Result{}, errors.New("netperf -O output: no column title netperf prints")
	}
	return r, nil
}

// titleKeys are the selectors csvTitles names.
var titleKeys = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range csvTitles {
		m[k] = true
	}
	return m
}()

// ParseCSV parses netperf's -o output (netperf manual, "Omni Output Selection"): a banner
// unless -P 0, a line of column titles unless -P 0, and one line of values. Without the
// titles the columns cannot be named, so that form is refused.
func ParseCSV(data []byte) (Result, error) {
	text := strings.ReplaceAll(toolkit.Text(data), "\r", "")
	r := Result{Values: map[string]string{}}
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if t := strings.TrimSpace(l); t != "" {
			lines = append(lines, t)
		}
	}
	if len(lines) > 0 && strings.Contains(lines[0], " TEST") && bannerRE.MatchString(lines[0]) {
		r.Banner = lines[0]
		lines = lines[1:]
	}
	var header []string
	for i, l := range lines {
		rec, err := csv.NewReader(strings.NewReader(l)).Read()
		if err != nil || len(rec) < 1 {
			r.Other = append(r.Other, l)
			continue
		}
		if header == nil && i+1 < len(lines) && !numeric(rec[0]) && knownColumns(rec) {
			header = rec
			continue
		}
		if header != nil && len(rec) == len(header) {
			for j, h := range header {
				r.Values[columnKey(h)] = strings.TrimSpace(rec[j])
			}
			header = nil
			continue
		}
		r.Other = append(r.Other, l)
	}
	if err := r.failure(); err != nil {
		if len(r.Values) == 0 && len(lines) > 0 && numeric(strings.Split(lines[len(lines)-1], ",")[0]) {
			return Result{}, errors.New("netperf CSV output without its column titles (-P 0 -o) cannot be read: keep the titles or use -k")
		}
		return Result{}, err
	}
	return r, nil
}

// columnKey is the selector a CSV column title names, or the title upper-cased.
func columnKey(title string) string {
	if k, ok := csvTitles[strings.ToLower(strings.Join(strings.Fields(title), " "))]; ok {
		return k
	}
	return strings.ToUpper(strings.TrimSpace(title))
}

// knownColumns reports whether a CSV line is a title line: one of its columns names a
// selector cnperf knows.
func knownColumns(rec []string) bool {
	for _, h := range rec {
		k := columnKey(h)
		for _, list := range [][]string{streamSelectors, rrSelectors} {
			for _, s := range list {
				if s == k {
					return true
				}
			}
		}
	}
	return false
}

func numeric(s string) bool {
	_, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return err == nil
}

// Classic output: the tables netperf prints without -k/-o (the "legacy" output of its
// migrated tests, nettest_omni.c send_tcp_stream ... send_tcp_rr, and nettest_bsd.c for
// TCP_SENDFILE). The last header line gives each table's units:
//
//	bytes  bytes   bytes    secs.    10^6bits/sec                    STREAM, MAERTS, SENDFILE
//	bytes  bytes   bytes    secs.    10^6bits/s  % S  % S  us/KB  us/KB     ... with -c -C
//	bytes   bytes    secs            #      #   10^6bits/sec        UDP_STREAM (sent, received rows)
//	bytes   bytes    secs            #      #   10^6bits/sec % SS     us/KB      ... with -c -C
//	bytes  Bytes  bytes    bytes   secs.    per sec                  RR, CRR (+ remote socket row)
//	bytes  bytes  bytes   bytes  secs.   per sec  % S  % S  us/Tr  us/Tr   ... with -c -C
//
// With -P 0 netperf prints neither banner nor headers, only the rows: the table is then told
// by the rows' shape, the unit is netperf's default (-f m, 10^6 bits/s) and the profile must
// be given.
var (
	classicStreamUnitsRE = regexp.MustCompile(`^bytes\s+bytes\s+bytes\s+secs\.\s+(\S+)(\s+%.*)?$`)
	classicUDPUnitsRE    = regexp.MustCompile(`^bytes\s+bytes\s+secs\s+#\s+#\s+(\S+)(\s+%.*)?$`)
	classicRRUnitsRE     = regexp.MustCompile(`(?i)^bytes\s+bytes\s+bytes\s+bytes\s+secs\.\s+per sec(\s+%.*)?$`)
	// -v 2 adds to an RR table (nettest_omni.c, "Alignment Offset RoundTrip Trans Throughput"):
	// alignment and offset local/remote, the round-trip latency in usec/Tran, the transaction
	// rate and the outbound and inbound throughput in 10^6 bits/s; then a histogram of decades.
	verboseRRTitleRE = regexp.MustCompile(`^(Alignment\s+Offset\s+RoundTrip|Local\s+Remote\s+Local\s+Remote\s+Latency)`)
	verboseRRUnitsRE = regexp.MustCompile(`^Send\s+Recv\s+Send\s+Recv\s+usec/Tran\s+per sec\s+Outbound\s+Inbound$`)
	histogramRE      = regexp.MustCompile(`^(Histogram of |(UNIT|TEN|HUNDRED)_(USEC|MSEC|SEC)\s*:|>100_SECS:|HIST_TOTAL:)`)
	burstRE          = regexp.MustCompile(`first burst (\d+)`)
)

// classicKind is the shape of a classic table.
type classicKind int

const (
	classicNone classicKind = iota
	classicStream
	classicUDP
	classicRR
)

// isClassicUnits reports whether a line is the units line of a classic table.
func isClassicUnits(t string) bool {
	return classicStreamUnitsRE.MatchString(t) || classicUDPUnitsRE.MatchString(t) || classicRRUnitsRE.MatchString(t)
}

// numericRow splits a line into numbers, or returns nil when one field is not a number.
func numericRow(t string) []string {
	f := strings.Fields(t)
	if len(f) == 0 {
		return nil
	}
	for _, x := range f {
		if !numeric(x) {
			return nil
		}
	}
	return f
}

// shapeOf tells a table from its first two rows' column counts.
func shapeOf(rows [][]string) classicKind {
	if len(rows) == 0 {
		return classicNone
	}
	n0, n1 := len(rows[0]), -1
	if len(rows) > 1 {
		n1 = len(rows[1])
	}
	switch {
	case (n0 == 5 || n0 == 9) && n1 == -1:
		return classicStream
	case (n0 == 6 && n1 == 4) || (n0 == 8 && n1 == 6):
		return classicUDP
	case (n0 == 6 || n0 == 10) && (n1 == 2 || n1 == -1):
		return classicRR
	}
	return classicNone
}

// classicScan is what one pass over a classic output found.
type classicScan struct {
	kind      classicKind // the table its units line names, or classicNone
	units     string      // the throughput units of that line
	rows      [][]string  // the numeric rows
	verbose   []string    // the -v 2 row
	histogram bool        // a -v 2 histogram was printed
}

// ParseClassic parses one classic table (see above), with or without banner and headers.
func ParseClassic(data []byte) (Result, error) {
	r := Result{Values: map[string]string{}}
	s := scanClassic(&r, data)
	if err := r.failure(); err != nil && len(s.rows) == 0 {
		return Result{}, err
	}
	shape, err := s.shape(r.Banner)
	if err != nil {
		return Result{}, err
	}
	units := s.units
	if s.kind == classicNone {
		r.Headerless = true
		units = "10^6bits/s"
		if shape == classicRR {
			units = "Trans/s"
		}
	}
	r.Values["THROUGHPUT_UNITS"] = strings.TrimSuffix(units, "ec") // "10^6bits/sec" → "10^6bits/s"
	switch shape {
	case classicStream:
		r.classicStreamValues(s.rows[0])
	case classicUDP:
		classicUDPValues(r.Values, s.rows[0], s.rows[1])
	case classicRR:
		r.classicRRValues(s.rows[0], s.verbose)
	}
	if s.histogram {
		r.Notes = append(r.Notes, "netperf's -v 2 histogram (ten buckets per decade of time: 10-19 µs, 20-29 µs, ...) is not read: too coarse for percentiles (omni -j gives them)")
	}
	return r, nil
}

// scanClassic sorts the lines of a classic output: the banner and the lines that are no part
// of a table go into r, the table's units, rows, -v 2 row and histogram into the scan.
func scanClassic(r *Result, data []byte) classicScan {
	var s classicScan
	inVerbose := false
	for _, line := range strings.Split(strings.ReplaceAll(toolkit.Text(data), "\r", ""), "\n") {
		t := strings.TrimSpace(line)
		nums := numericRow(t)
		switch {
		case t == "":
		case verboseRRTitleRE.MatchString(t):
		case verboseRRUnitsRE.MatchString(t):
			inVerbose = true
		case inVerbose && s.verbose == nil && len(nums) == 8:
			s.verbose = nums
		case histogramRE.MatchString(t):
			s.histogram = true
		case r.Banner == "" && len(s.rows) == 0 && strings.Contains(t, " TEST") && bannerRE.MatchString(t):
			r.Banner = t
		case classicStreamUnitsRE.MatchString(t):
			s.kind, s.units = classicStream, classicStreamUnitsRE.FindStringSubmatch(t)[1]
		case classicUDPUnitsRE.MatchString(t):
			s.kind, s.units = classicUDP, classicUDPUnitsRE.FindStringSubmatch(t)[1]
		case classicRRUnitsRE.MatchString(t):
			s.kind, s.units = classicRR, "Trans/s"
		case nums != nil:
			s.rows = append(s.rows, nums)
		case len(s.rows) == 0 && isClassicHeader(t):
		default:
			r.Other = append(r.Other, t)
		}
	}
	return s
}

// shape tells the table from its rows, and says why when the rows are none netperf prints
// or not the table of the units line.
func (s classicScan) shape(banner string) (classicKind, error) {
	shape := shapeOf(s.rows)
	if shape == classicNone {
		if len(s.rows) == 0 {
			if banner != "" {
				return classicNone, fmt.Errorf("netperf printed its banner and no results (cut short?): %s", banner)
			}
			return classicNone, errors.New("netperf output has no results")
		}
		return classicNone, fmt.Errorf("netperf classic output: rows of %d columns are no table netperf prints", len(s.rows[0]))
	}
	if s.kind != classicNone && s.kind != shape {
		return classicNone, fmt.Errorf("netperf classic output: its header and its %d-column rows are different tables", len(s.rows[0]))
	}
	return shape, nil
}

// classicCPU sets the CPU utilisation and service demand of both ends from a row's columns.
func classicCPU(v map[string]string, row []string, lu, ru, lsd, rsd int, sdUnits string) {
	v["LOCAL_CPU_UTIL"], v["REMOTE_CPU_UTIL"], v["LOCAL_SD"], v["REMOTE_SD"] = row[lu], row[ru], row[lsd], row[rsd]
	v["SD_UNITS"] = sdUnits
}

// classicStreamValues reads a STREAM, MAERTS or SENDFILE row: recv socket, send socket, send
// message size, elapsed, throughput [, CPU local and remote, service demand local and remote].
func (r Result) classicStreamValues(row []string) {
	v := r.Values
	v["RSR_SIZE"], v["LSS_SIZE"], v["LOCAL_SEND_SIZE"], v["ELAPSED_TIME"], v["THROUGHPUT"] = row[0], row[1], row[2], row[3], row[4]
	if r.Profile() == api.TCPMaerts {
		// MAERTS: netperf receives; the send socket and message size are netserver's
		// (send_tcp_maerts prints the same columns from the other side).
		delete(v, "RSR_SIZE")
		delete(v, "LSS_SIZE")
		delete(v, "LOCAL_SEND_SIZE")
		v["LSR_SIZE"], v["RSS_SIZE"], v["REMOTE_SEND_SIZE"] = row[0], row[1], row[2]
	}
	if len(row) == 9 {
		classicCPU(v, row, 5, 6, 7, 8, "usec/KB")
	}
}

// classicUDPValues reads the two rows of a UDP_STREAM table. Sent: socket, message size,
// elapsed, messages sent, failed sends, send rate [, local CPU and service demand]; received:
// socket, elapsed, messages received, receive rate [, remote CPU and service demand]
// (send_udp_stream).
func classicUDPValues(v map[string]string, row, recv []string) {
	v["LSS_SIZE"], v["LOCAL_SEND_SIZE"], v["ELAPSED_TIME"] = row[0], row[1], row[2]
	v["LOCAL_SEND_CALLS"], v["FAILED_SENDS"], v["LOCAL_SEND_THROUGHPUT"] = row[3], row[4], row[5]
	v["RSR_SIZE"], v["REMOTE_RECV_CALLS"], v["REMOTE_RECV_THROUGHPUT"] = recv[0], recv[2], recv[3]
	v["THROUGHPUT"] = row[5]
	if len(row) == 8 {
		v["LOCAL_CPU_UTIL"], v["LOCAL_SD"], v["REMOTE_CPU_UTIL"], v["REMOTE_SD"] = row[6], row[7], recv[4], recv[5]
		v["SD_UNITS"] = "usec/KB"
	}
}

// classicRRValues reads an RR or CRR row: local send and receive socket, request and response
// size, elapsed, transaction rate [, CPU local and remote, service demand local and remote]
// (the next row holds the remote socket sizes), the banner's first burst and the -v 2 row's
// round-trip latency.
func (r Result) classicRRValues(row, verbose []string) {
	v := r.Values
	v["LSS_SIZE"], v["LSR_SIZE"], v["REQUEST_SIZE"], v["RESPONSE_SIZE"], v["ELAPSED_TIME"] = row[0], row[1], row[2], row[3], row[4]
	v["TRANSACTION_RATE"], v["THROUGHPUT"] = row[5], row[5]
	if len(row) == 10 {
		classicCPU(v, row, 6, 7, 8, 9, "usec/Tran")
	}
	if m := burstRE.FindStringSubmatch(r.Banner); m != nil {
		v["BURST_SIZE"] = m[1]
	}
	if verbose != nil {
		v["RT_LATENCY"] = verbose[4]
	}
}

// isClassicHeader reports whether a line is one of the title lines above a classic table.
func isClassicHeader(t string) bool {
	for _, p := range []string{"Recv", "Send", "Socket", "Size", "Local /Remote", "bytes"} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// bitsPerUnit converts a THROUGHPUT_UNITS value to bits/s per unit (netlib.c format_units and
// calc_thruput_interval_omni: K/M/G bytes are powers of 1024, k/m/g bits powers of 1000).
func bitsPerUnit(units string) (float64, bool) {
	switch strings.TrimSpace(units) {
	case "10^0bits/s":
		return 1, true
	case "10^3bits/s":
		return 1e3, true
	case "10^6bits/s":
		return 1e6, true
	case "10^9bits/s":
		return 1e9, true
	case "Bytes/s":
		return 8, true
	case "KBytes/s":
		return 8 * 1024, true
	case "MBytes/s":
		return 8 * 1024 * 1024, true
	case "GBytes/s":
		return 8 * 1024 * 1024 * 1024, true
	}
	return 0, false
}

// Float returns a selector's value, whether it was printed, and an error when it was printed
// but is not a number.
func (r Result) Float(key string) (float64, bool, error) {
	s, ok := r.Values[key]
	if !ok || s == "" {
		return 0, false, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, true, fmt.Errorf("netperf %s=%q is not a number", key, s)
	}
	return v, true, nil
}

// floats reads several selectors; absent ones are left out of the map.
func (r Result) floats(keys ...string) (map[string]float64, error) {
	out := map[string]float64{}
	for _, k := range keys {
		v, ok, err := r.Float(k)
		if err != nil {
			return nil, err
		}
		if ok {
			out[k] = v
		}
	}
	return out, nil
}

// bannerTests are the test names of netperf's banners ("TCP SENDFILE TEST from ...") and
// their profiles, a name before every name it contains ("TCP REQUEST/RESPONSE" is in
// "TCP CONNECT/REQUEST/RESPONSE").
var bannerTests = []struct {
	name    string
	profile api.Profile
}{
	{"TCP SENDFILE", api.TCPSendfile},
	{"TCP MAERTS", api.TCPMaerts},
	{"TCP STREAM", api.TCPStream},
	{"UDP STREAM", api.UDPStream},
	{"UDP UNIDIRECTIONAL SEND", api.UDPStream},
	{"TCP CONNECT/REQUEST/RESPONSE", api.TCPCRR},
	{"TCP REQUEST/RESPONSE", api.TCPRR},
	{"UDP REQUEST/RESPONSE", api.UDPRR},
}

// Profile guesses the profile from the banner or the PROTOCOL/DIRECTION selectors, or "".
func (r Result) Profile() api.Profile {
	b := strings.ToUpper(r.Banner)
	for _, t := range bannerTests {
		if strings.Contains(b, t.name) {
			return t.profile
		}
	}
	proto, dir := strings.ToUpper(r.Values["PROTOCOL"]), strings.ToUpper(r.Values["DIRECTION"])
	switch {
	case proto == "TCP" && dir == "SEND":
		return api.TCPStream
	case proto == "TCP" && dir == "RECV":
		return api.TCPMaerts
	case proto == "UDP" && dir == "SEND":
		return api.UDPStream
	case proto == "TCP" && strings.Contains(dir, "SEND|RECV"):
		return api.TCPRR
	case proto == "UDP" && strings.Contains(dir, "SEND|RECV"):
		return api.UDPRR
	}
	return ""
}

// ToSample turns one netperf test's selectors into a sample for profile p.
func (r Result) ToSample(p api.Profile) (api.Sample, error) {
	if units, ok := r.Values["THROUGHPUT_UNITS"]; ok {
		if p.IsRR() {
			if _, bits := bitsPerUnit(units); units != "Trans/s" && !bits {
				return api.Sample{}, fmt.Errorf("netperf THROUGHPUT_UNITS=%q is not a known unit", units)
			}
		} else if _, ok := bitsPerUnit(units); !ok {
			return api.Sample{}, fmt.Errorf("netperf THROUGHPUT_UNITS=%q is not a bit or byte rate (a %s test?)", units, p)
		}
	}
	var s api.Sample
	var err error
	if p.IsRR() {
		s, err = r.rrSample(p)
	} else {
		s, err = r.streamSample(p)
	}
	if err != nil {
		return api.Sample{}, err
	}
	if err := r.common(&s, p); err != nil {
		return api.Sample{}, err
	}
	for _, l := range r.Other {
		toolkit.AddNote(&s, "netperf said: "+l)
	}
	for _, n := range r.Notes {
		toolkit.AddNote(&s, n)
	}
	return s, nil
}

func (r Result) streamSample(p api.Profile) (api.Sample, error) {
	units, ok := r.Values["THROUGHPUT_UNITS"]
	if !ok {
		return api.Sample{}, errors.New("netperf output has no THROUGHPUT_UNITS: the throughput's unit cannot be checked")
	}
	mult, _ := bitsPerUnit(units)
	v, err := r.floats("THROUGHPUT", "LOCAL_RECV_THROUGHPUT", "REMOTE_RECV_THROUGHPUT",
		"LOCAL_BYTES_SENT", "LOCAL_BYTES_RECVD", "REMOTE_BYTES_SENT", "REMOTE_BYTES_RECVD",
		"LOCAL_SEND_CALLS", "REMOTE_RECV_CALLS")
	if err != nil {
		return api.Sample{}, err
	}
	// The receiver's rate: netserver's for STREAM/SENDFILE/UDP_STREAM, netperf's for MAERTS.
	recvKey := "REMOTE_RECV_THROUGHPUT"
	if p == api.TCPMaerts {
		recvKey = "LOCAL_RECV_THROUGHPUT"
	}
	tput, ok := v[recvKey]
	var s api.Sample
	if !ok || (tput <= 0 && v["THROUGHPUT"] > 0 && p != api.UDPStream) {
		// Older or hand-picked selector lists: THROUGHPUT is netperf's goodput.
		tput, ok = v["THROUGHPUT"]
		if !ok {
			return api.Sample{}, errors.New("netperf output has no THROUGHPUT")
		}
		if p == api.UDPStream {
			toolkit.AddNote(&s, "UDP throughput is netperf's THROUGHPUT (no REMOTE_RECV_THROUGHPUT): it may be the send rate")
		}
	}
	if tput <= 0 {
		return api.Sample{}, fmt.Errorf("netperf measured no data received (%s=%v %s)", recvKey, tput, units)
	}
	s.ThroughputBitsPerSecond = toolkit.F(tput * mult)
	if p == api.TCPMaerts {
		if b, ok := v["REMOTE_BYTES_SENT"]; ok {
			s.BytesSent = toolkit.I(int64(b))
		}
		if b, ok := v["LOCAL_BYTES_RECVD"]; ok {
			s.BytesReceived = toolkit.I(int64(b))
		}
	} else {
		if b, ok := v["LOCAL_BYTES_SENT"]; ok {
			s.BytesSent = toolkit.I(int64(b))
		}
		if b, ok := v["REMOTE_BYTES_RECVD"]; ok {
			s.BytesReceived = toolkit.I(int64(b))
		}
	}
	if p == api.UDPStream {
		sent, okS := v["LOCAL_SEND_CALLS"]
		got, okR := v["REMOTE_RECV_CALLS"]
		if okS && okR && sent > 0 {
			// One send call is one datagram; one receive call on a UDP socket is one datagram.
			s.PacketsSent = toolkit.I(int64(sent))
			s.PacketsReceived = toolkit.I(int64(got))
			lost := math.Max(sent-got, 0)
			s.PacketsLost = toolkit.I(int64(lost))
			s.LossPercent = toolkit.F(100 * lost / sent)
			if e, ok, _ := r.Float("ELAPSED_TIME"); ok && e > 0 {
				s.PacketsPerSecond = toolkit.F(got / e)
			}
		}
		toolkit.AddNote(&s, "UDP throughput and packets as received by netserver")
	}
	if timesSends(p) {
		lv, err := r.floats(latencySelectors...)
		if err != nil {
			return api.Sample{}, err
		}
		if lat, ok := toolLatency(lv); ok {
			lat.Note = sendCallNote
			s.SendCallMicroseconds = lat
		}
	}
	return s, nil
}

// toolLatency is netperf's histogram statistics (MIN, MEAN, P50, P90, P99, MAX, STDDEV_LATENCY,
// µs) among v as measured by the tool; false when v has none (netperf prints -1 for a figure it
// does not have).
func toolLatency(v map[string]float64) (*api.Latency, bool) {
	lat := &api.Latency{Method: "tool", Provenance: api.LatencyMeasured}
	have := false
	set := func(key string, dst **float64) {
		if x, ok := v[key]; ok && x >= 0 {
			*dst = toolkit.F(x)
			have = true
		}
	}
	set("MIN_LATENCY", &lat.Min)
	set("MEAN_LATENCY", &lat.Mean)
	set("P50_LATENCY", &lat.P50)
	set("P90_LATENCY", &lat.P90)
	set("P99_LATENCY", &lat.P99)
	set("MAX_LATENCY", &lat.Max)
	set("STDDEV_LATENCY", &lat.Stddev)
	return lat, have
}

// sendCallNote says what a stream's latency statistics are.
const sendCallNote = "netperf's time of each send call (its histogram, 100 buckets per decade; the statistics " +
	"k8s-netperf's P99_LATENCY selector asks for on a stream): how long the sender's send() took, not a round trip"

func (r Result) rrSample(p api.Profile) (api.Sample, error) {
	v, err := r.floats("TRANSACTION_RATE", "THROUGHPUT", "RT_LATENCY", "MIN_LATENCY", "MEAN_LATENCY",
		"P50_LATENCY", "P90_LATENCY", "P99_LATENCY", "MAX_LATENCY", "STDDEV_LATENCY", "BURST_SIZE")
	if err != nil {
		return api.Sample{}, err
	}
	rate, ok := v["TRANSACTION_RATE"]
	if !ok && r.Values["THROUGHPUT_UNITS"] == "Trans/s" {
		rate, ok = v["THROUGHPUT"]
	}
	if !ok {
		return api.Sample{}, errors.New("netperf output has no TRANSACTION_RATE (nor THROUGHPUT in Trans/s)")
	}
	if rate <= 0 {
		return api.Sample{}, fmt.Errorf("netperf completed no transactions (TRANSACTION_RATE=%v)", rate)
	}
	var s api.Sample
	s.TransactionsPerSecond = toolkit.F(rate)
	if p == api.TCPCRR {
		// Every TCP_CRR transaction opens and closes a connection.
		s.ConnectionsPerSecond = toolkit.F(rate)
	}
	lat, have := toolLatency(v)
	if !have {
		if rt, ok := v["RT_LATENCY"]; ok && rt > 0 {
			// netperf computes it from the rate: 10^6 ÷ (transactions ÷ elapsed) × (1 + burst)
			// (nettest_omni.c send_omni_inner), it times no transaction.
			lat.Mean = toolkit.F(rt)
			lat.Method, lat.Provenance = "rate-derived", api.LatencyDerived
			lat.Note = "DERIVED, not measured: netperf's round-trip latency (RT_LATENCY, the classic -v 2 \"RoundTrip Latency " +
				"usec/Tran\") is 10^6 ÷ transaction rate × (1 + burst), computed by netperf from the rate; run omni with -j " +
				"and the *_LATENCY selectors for measured latency"
			have = true
		}
	} else {
		lat.Note = "netperf's per-transaction statistics (global -j); its percentiles come from its histogram (100 buckets per decade), so they carry a small bucketing error"
	}
	if have {
		s.Latency = lat
	}
	if p == api.TCPCRR {
		toolkit.AddNote(&s, "a TCP_CRR transaction is connect, request, response and close")
	}
	if b, ok := v["BURST_SIZE"]; ok && b > 0 {
		toolkit.AddNote(&s, fmt.Sprintf("%d transactions in flight (netperf -b %d)", int(b)+1, int(b)))
	}
	return s, nil
}

// common reads the figures every test may carry: elapsed time, retransmissions, CPU and
// service demand.
func (r Result) common(s *api.Sample, p api.Profile) error {
	v, err := r.floats("ELAPSED_TIME", "LOCAL_TRANSPORT_RETRANS", "REMOTE_TRANSPORT_RETRANS",
		"LOCAL_CPU_UTIL", "REMOTE_CPU_UTIL", "LOCAL_SD", "REMOTE_SD")
	if err != nil {
		return err
	}
	if e, ok := v["ELAPSED_TIME"]; ok {
		if e <= 0 {
			// netperf -l -1 (stop after one byte or transaction) prints 0.00 and a rate
			// computed from nothing: no measurement to keep.
			return fmt.Errorf("netperf: elapsed time %v s: the test measured nothing (it ended at once, e.g. -l with a byte or transaction count)", e)
		}
		s.DurationSeconds = e
	}
	// -1: could not be determined, -2: not attempted (netperf manual).
	if x, ok := v["LOCAL_TRANSPORT_RETRANS"]; ok && x >= 0 && p != api.UDPStream && p != api.UDPRR {
		total := x
		if y, ok := v["REMOTE_TRANSPORT_RETRANS"]; ok && y >= 0 {
			total += y
			toolkit.AddNote(s, fmt.Sprintf("retransmits: %d by netperf + %d by netserver", int64(x), int64(y)))
		}
		s.Retransmits = toolkit.F(total)
	}
	perTrans := p.IsRR()
	if u := strings.ToLower(r.Values["SD_UNITS"]); u != "" {
		perTrans = strings.Contains(u, "tr")
	}
	side := func(util, sd string) *api.CPUUsage {
		x, ok := v[util]
		if !ok || x < 0 {
			return nil
		}
		if x > 100 {
			// netperf's figure is system-wide, 0-100 %; netserver reports more than that in
			// some tests (e.g. 499.44 % on TCP_CRR, seen on loopback): not a utilisation.
			toolkit.AddNote(s, fmt.Sprintf("netperf reported %s=%v %%, more than all of the system's CPUs: left out", util, x))
			return nil
		}
		c := &api.CPUUsage{HostPercent: toolkit.F(x)}
		if d, ok := v[sd]; ok && d >= 0 {
			if perTrans {
				c.ServiceDemandMicrosecondsPerTransaction = toolkit.F(d)
			} else {
				c.ServiceDemandMicrosecondsPerKB = toolkit.F(d)
			}
		}
		return c
	}
	client, server := side("LOCAL_CPU_UTIL", "LOCAL_SD"), side("REMOTE_CPU_UTIL", "REMOTE_SD")
	if client != nil || server != nil {
		s.CPU = &api.SampleCPU{Client: client, Server: server}
		toolkit.AddNote(s, "netperf CPU is system-wide utilisation (0-100% of all CPUs); service demand in µs of CPU per KB (1024 B) or per transaction")
	}
	return nil
}
