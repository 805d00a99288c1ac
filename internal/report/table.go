package report

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/figure"
	"github.com/cnperf/cnperf/internal/meshview"
	"github.com/cnperf/cnperf/internal/report/relative"
	"github.com/cnperf/cnperf/internal/report/sweep"
	"github.com/cnperf/cnperf/internal/stats"
	"github.com/cnperf/cnperf/internal/text"

	"github.com/cnperf/cnperf/internal/safetext"
)

// Table columns.
const (
	colIndex = iota
	colProfile
	colDriver
	colPath
	colMsg
	colPar
	colBurst
	colSamples
	colResult
	colCoV
	colP50
	colP99
	colRetrans
	colLoss
	colDelta
	colChecks
	colStatus
	numCols
)

var tableHeader = []string{"#", "PROFILE", "DRIVER", "PATH", "MSG", "PAR", "BURST", "SAMPLES", "RESULT (mean ± 95% CI)",
	"COV", "P50 µs", "P99 µs", "RETRANS", "LOSS", "Δ DRIVERS", "CHECKS", "STATUS"}

// tableEncoder is the table for people: the default view fits text.FitWidth(width) columns,
// moving long texts (failure causes, checks) below the table and leaving out the least
// important columns when they do not fit; the wide view (-o wide) shows every column with
// the long texts in their rows.
type tableEncoder struct {
	wide  bool
	width int // as asked (Width); text.FitWidth gives the width a default view fits
}

func (e tableEncoder) withWidth(columns int) Encoder { e.width = columns; return e }

// Encode writes each run's table.
func (e tableEncoder) Encode(w io.Writer, runs []*api.Run) error {
	// Names, notes and errors come from tools and files: no control sequence reaches a reader.
	w = safetext.NewWriter(w, false)
	for i, run := range runs {
		if i > 0 {
			if _, err := fmt.Fprintln(w); err != nil {
				return err
			}
		}
		if err := e.writeRun(w, run); err != nil {
			return err
		}
	}
	return nil
}

// dropOrder is the order the default view leaves columns out when the table is wider than
// the width it fits: CHECKS first (the checks are under the table in full anyway), and the
// case's identity (#, profile, driver, path), its result and its status always stay.
var dropOrder = []int{colChecks, colRetrans, colCoV, colP50, colP99, colLoss, colDelta, colPar, colSamples, colBurst, colMsg}

// RunTitle is the one-line description of a run that heads its table.
func RunTitle(run *api.Run) string {
	parts := []string{"Run " + run.UUID}
	if run.Platform != "" {
		parts = append(parts, "platform "+run.Platform)
	}
	if run.Plan != "" {
		parts = append(parts, "plan "+run.Plan)
	}
	if c := run.Cluster; c != nil {
		if c.CNI != "" {
			cni := "CNI " + c.CNI
			if c.CNIVersion != "" {
				cni += " " + c.CNIVersion
			}
			if c.CNIMode != "" {
				cni += " (" + c.CNIMode + ")"
			}
			parts = append(parts, cni)
		}
		if c.KubernetesVersion != "" {
			parts = append(parts, "Kubernetes "+c.KubernetesVersion)
		}
		if kv := c.KubeVirt; kv != nil {
			s := strings.TrimSpace("KubeVirt " + kv.Version)
			if kv.Emulated {
				s += " (VMs in QEMU software emulation)"
			}
			parts = append(parts, s)
		}
	}
	if !run.StartTime.IsZero() {
		parts = append(parts, "started "+run.StartTime.UTC().Format(time.RFC3339))
	}
	if run.CnperfVersion != "" {
		parts = append(parts, "cnperf "+run.CnperfVersion)
	}
	if run.Imported {
		parts = append(parts, "imported")
	}
	if run.Interrupted {
		parts = append(parts, fmt.Sprintf("INTERRUPTED after %d cases", len(run.Results)))
	}
	return strings.Join(parts, "  ")
}

// writeWrapped prints s wrapped to width with a hanging indent: first starts the first
// line, rest the others.
func writeWrapped(w io.Writer, s string, width int, first, rest string) error {
	for _, l := range text.Wrap(s, width, first, rest) {
		if _, err := fmt.Fprintln(w, l); err != nil {
			return err
		}
	}
	return nil
}

// writeTitle prints a run's title (RunTitle), broken between its parts to fit width.
func writeTitle(w io.Writer, run *api.Run, width int) error {
	parts := strings.Split(RunTitle(run), "  ")
	line := parts[0]
	for _, p := range parts[1:] {
		if text.Width(line)+2+text.Width(p) > width {
			if _, err := fmt.Fprintln(w, line); err != nil {
				return err
			}
			line = "  " + p
			continue
		}
		line += "  " + p
	}
	_, err := fmt.Fprintln(w, line)
	return err
}

// latencyMarks numbers the latency methods the cells name ("*", "**", ...), each with the
// footnote that says what it is; the histogram's and the tool's own methods get no mark.
type latencyMarks struct {
	marks map[string]string
	notes []string
}

// mark returns the mark of a latency method, giving it the next one on first use.
func (lm *latencyMarks) mark(method string) string {
	if method == "" || method == stats.LatencyHistogram || method == "tool" {
		return ""
	}
	if m, ok := lm.marks[method]; ok {
		return m
	}
	m := strings.Repeat("*", len(lm.marks)+1)
	lm.marks[method] = m
	if method == api.LatencyDerived {
		lm.notes = append(lm.notes, m+" latency DERIVED from the transaction rate (flows ÷ rate), not measured: "+
			"a mean round trip only, in -o json (latencyMicroseconds.provenance \"derived\")")
	} else {
		lm.notes = append(lm.notes, fmt.Sprintf("%s latency method %q: %s", m, method, methodText(method)))
	}
	return m
}

// caseTable is the case table of one run as it is built: the table (a column shows when a
// row has something in it), the default view's long texts by case, and the latency marks.
type caseTable struct {
	*text.Table
	wide    bool
	details []string
	marks   *latencyMarks
}

func newCaseTable(wide bool) *caseTable {
	t := &text.Table{
		Header: tableHeader,
		Right: map[int]bool{colIndex: true, colMsg: true, colPar: true, colBurst: true, colSamples: true,
			colResult: true, colCoV: true, colP50: true, colP99: true, colRetrans: true, colLoss: true, colDelta: true},
		Hide: map[int]bool{colP50: true, colP99: true, colRetrans: true, colLoss: true, colDelta: true, colChecks: true},
	}
	// The default view shows BURST only when a case has one (0 is no burst).
	t.Hide[colBurst] = !wide
	return &caseTable{Table: t, wide: wide, marks: &latencyMarks{marks: map[string]string{}}}
}

// writeRun prints one run: its title, its mesh matrices, the case table with the lines under
// it, then its sweep, programming and relative views.
func (e tableEncoder) writeRun(w io.Writer, run *api.Run) error {
	width := text.FitWidth(e.width)
	if err := writeTitle(w, run, width); err != nil {
		return err
	}
	if len(run.Results) == 0 {
		_, err := fmt.Fprintln(w, "  (no finished cases)")
		return err
	}
	inMesh, err := writeMeshTables(w, run)
	if err != nil {
		return err
	}
	t := newCaseTable(e.wide)
	deltas := driverDeltas(run.Results, e.wide)
	markV4 := mixedFamilies(run.Results)
	for i := range run.Results {
		if !inMesh[i] {
			t.addRow(i, &run.Results[i], markV4, deltas)
		}
	}
	hasChecks := !t.Hide[colChecks]
	var hidden []string
	if !e.wide {
		hidden = t.Fit(width, "  ", dropOrder)
	}
	if len(t.Rows) > 0 {
		if err := t.Write(w, "  "); err != nil {
			return err
		}
	}
	for _, d := range t.details {
		if err := writeWrapped(w, d, width, "  ", "      "); err != nil {
			return err
		}
	}
	for _, n := range t.footnotes(run, hasChecks, hidden, width) {
		if err := writeWrapped(w, n, width, "  ", "    "); err != nil {
			return err
		}
	}
	if err := writeSweepTables(w, run, t.marks.mark, e.wide, width); err != nil {
		return err
	}
	if err := writeProgrammingTable(w, run, width); err != nil {
		return err
	}
	if !relative.Applies(run.Results) {
		return nil
	}
	// A lab run ends with each path next to host-host: what the datapath pieces cost here.
	if _, err := fmt.Fprintln(w); err != nil {
		return err
	}
	return relative.Write(w, run.Results)
}

// addRow adds result i's row (deltas: the Δ DRIVERS cells by result).
func (t *caseTable) addRow(i int, r *api.Result, markV4 bool, deltas map[int]string) {
	row := make([]string, numCols)
	row[colIndex] = strconv.Itoa(i + 1)
	row[colProfile] = string(r.Profile)
	row[colDriver] = r.Driver
	row[colPath] = pathCell(r, markV4)
	row[colMsg] = figure.Bytes(r.Params.MessageSizeBytes)
	row[colPar] = strconv.Itoa(r.Params.Parallel)
	row[colBurst] = strconv.Itoa(r.Params.Burst)
	if r.Params.Burst != 0 {
		t.Hide[colBurst] = false
	}
	if r.Profile.IsProgramming() { // changes, not traffic: no sizes or flows (the view below has the nodes)
		row[colMsg], row[colPar], row[colBurst] = "-", "-", "-"
	}
	ok := r.Summary.SamplesTotal - r.Summary.SamplesFailed
	row[colSamples] = fmt.Sprintf("%d/%d", ok, r.Summary.SamplesTotal)
	row[colResult], row[colCoV] = "-", "-"
	if f, has := figure.Main(r); has {
		st := f.Stat(&r.Summary)
		row[colResult] = f.Unit.FormatCI(st.Mean, (st.CI95High-st.CI95Low)/2)
		if st.N > 1 {
			row[colCoV] = strconv.FormatFloat(st.CoV*100, 'f', 1, 64) + "%"
		}
	}
	t.latencyCells(row, r.Summary.LatencyMicroseconds)
	row[colRetrans], row[colLoss] = "-", "-"
	if st := r.Summary.Retransmits; st != nil {
		row[colRetrans] = figure.CountNumber(st.Mean)
		t.Hide[colRetrans] = false
	}
	if st := r.Summary.LossPercent; st != nil {
		row[colLoss] = figure.Number(st.Mean) + "%"
		t.Hide[colLoss] = false
	}
	row[colDelta] = "-"
	if d, ok := deltas[i]; ok {
		row[colDelta] = d
		t.Hide[colDelta] = false
	}
	t.checksCell(row, i, r)
	row[colStatus] = statusCell(r)
	if !t.wide && row[colStatus] != "ok" {
		t.details = append(t.details, fmt.Sprintf("#%d %s", i+1, row[colStatus]))
		row[colStatus], _, _ = strings.Cut(row[colStatus], ":")
	}
	t.Rows = append(t.Rows, row)
}

// latencyCells fills P50 and P99 with the percentiles and their method's mark; a derived
// latency is never a percentile: the P50 cell says that the result's latency is derived.
func (t *caseTable) latencyCells(row []string, l *api.Latency) {
	row[colP50], row[colP99] = "-", "-"
	if l != nil && l.Provenance == api.LatencyDerived {
		row[colP50] += t.marks.mark(api.LatencyDerived)
		t.Hide[colP50] = false
	} else if l != nil && (l.P50 != nil || l.P99 != nil) {
		m := t.marks.mark(l.Method)
		if l.P50 != nil {
			row[colP50] = figure.Number(*l.P50) + m
			t.Hide[colP50] = false
		}
		if l.P99 != nil {
			row[colP99] = figure.Number(*l.P99) + m
			t.Hide[colP99] = false
		}
	}
}

// checksCell fills CHECKS with what the checks of result i say; the default view shows their
// tags and keeps their texts for the lines under the table.
func (t *caseTable) checksCell(row []string, i int, r *api.Result) {
	row[colChecks] = "-"
	c := figure.CheckList(r)
	if len(c) == 0 {
		return
	}
	tags, texts := make([]string, len(c)), make([]string, len(c))
	for k := range c {
		tags[k], texts[k] = c[k].Tag, c[k].Text
	}
	row[colChecks] = strings.Join(texts, "; ")
	if !t.wide {
		row[colChecks] = strings.Join(tags, ", ")
		t.details = append(t.details, fmt.Sprintf("#%d checks: %s", i+1, strings.Join(texts, "; ")))
	}
	t.Hide[colChecks] = false
}

// footnotes are the lines under the case table: the latency methods, Δ DRIVERS, CHECKS, the
// columns hidden to fit width, then the run's networks, notes, path MTU and cluster.
func (t *caseTable) footnotes(run *api.Run, hasChecks bool, hidden []string, width int) []string {
	var footnotes []string
	// The latency methods' marks are on P50/P99 cells and in sweep tables.
	if !t.Hide[colP50] || !t.Hide[colP99] || len(sweep.Find(run.Results)) > 0 {
		footnotes = append(footnotes, t.marks.notes...)
	}
	if !t.Hide[colDelta] {
		ref := "; the first driver's row reads ref"
		if t.wide {
			ref = ""
		}
		footnotes = append(footnotes, "Δ DRIVERS: difference of the mean from the first driver that measured the same case in this run"+ref)
	}
	if hasChecks {
		footnotes = append(footnotes, checksFootnote)
	}
	if len(hidden) > 0 {
		footnotes = append(footnotes, fmt.Sprintf("not shown to fit %d columns: %s (-o wide shows every column)", width, strings.Join(hidden, ", ")))
	}
	footnotes = append(footnotes, networkNotes(run.Results)...)
	footnotes = append(footnotes, vmNotes(run.Results)...)
	for _, n := range run.Notes {
		footnotes = append(footnotes, "note: "+n)
	}
	footnotes = append(footnotes, pathMTULines(run.PathMTU)...)
	return append(footnotes, ClusterLines(run.Cluster)...)
}

// writeMeshTables prints a mesh run's node × node matrices (as cnperf mesh printed them,
// indented under the run's title) and reports which results are matrix cells. Those get no
// row of their own in the case table: a row does not name its node pair, and a mesh of n
// nodes has n·(n−1) of them per matrix, which would bury the matrices. A line points to the
// formats that keep every case's detail.
func writeMeshTables(w io.Writer, run *api.Run) (map[int]bool, error) {
	m := run.Mesh
	if m == nil || len(m.Matrices) == 0 {
		return nil, nil
	}
	inMesh := map[int]bool{}
	for _, mat := range m.Matrices {
		for _, c := range mat.Cells {
			if c.Result >= 0 && c.Result < len(run.Results) {
				inMesh[c.Result] = true
			}
		}
	}
	iw := &indentWriter{w: w, indent: "  ", bol: true}
	if err := meshview.WriteTable(iw, run); err != nil {
		return nil, err
	}
	_, err := fmt.Fprintf(w, "  (%d cases, one per cell: -o csv, mesh-cells-csv, json or html show each case's samples and retransmits)\n", len(inMesh))
	return inMesh, err
}

// indentWriter prefixes every non-empty line with indent.
type indentWriter struct {
	w      io.Writer
	indent string
	bol    bool // the next byte starts a line
}

func (iw *indentWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		if iw.bol && p[0] != '\n' {
			if _, err := io.WriteString(iw.w, iw.indent); err != nil {
				return n, err
			}
		}
		line := p
		i := bytes.IndexByte(p, '\n')
		if i >= 0 {
			line = p[:i+1]
		}
		k, err := iw.w.Write(line)
		n += k
		if err != nil {
			return n, err
		}
		iw.bol = i >= 0
		p = p[len(line):]
	}
	return n, nil
}

// checksFootnote explains the CHECKS column (figure.Checks) under tables.
const checksFootnote = "CHECKS: CI = confidence half-width of the headline figure against the --confidence target after N samples " +
	"(MISSED: why); outliers = samples outside median ± 3·MAD; trend = Spearman correlation with sample order, p < 0.05; " +
	"ramp-up = first interval of a sample off the rest by more than their noise"

func methodText(method string) string {
	switch method {
	case stats.LatencyPerSampleMedian:
		return "no per-transaction data; each percentile is the median of the samples' percentiles"
	case "tool-rtt-from-one-way":
		return "the tool printed one-way latency; doubled to round-trip"
	}
	return "see the JSON output"
}

// mixedFamilies reports whether results of a run are on both IP families (--ip-family dual):
// then the IPv4 ones are marked " v4" as the IPv6 ones are always marked " v6".
func mixedFamilies(results []api.Result) bool {
	v4, v6 := false, false
	for i := range results {
		switch results[i].Params.IPFamily {
		case "ipv4":
			v4 = true
		case "ipv6":
			v6 = true
		}
	}
	return v4 && v6
}

// pathCell is the path column: the path and what the case changed about it (hostNetwork,
// Service, IP family, topology, secondary network). markV4: mark IPv4 too (mixedFamilies).
func pathCell(r *api.Result, markV4 bool) string {
	s := string(r.Path)
	row, _ := r.Path.Row()
	if r.Params.HostNetwork && !row.HostNetwork() {
		s += "+hostnet"
	}
	if r.Params.Service && !row.Service() {
		s += "+svc"
	}
	s += familyMark(r.Params.IPFamily, markV4)
	if r.Topology != nil && r.Topology.Flavour != "" {
		s += " [" + r.Topology.Flavour + "]"
	}
	if r.Params.Network != "" {
		s += "+net" // its footnote (networkNotes) names the network: one per run
	}
	if vmRoles(r) != "" {
		s += "+vm" // its footnote (vmNotes) says which endpoints, their binding and vCPUs
	}
	return s
}

// familyMark is what a cell adds for an IP family: " v6" for IPv6, " v4" for IPv4 when markV4
// (a run on both families, or a result that says its family where it matters, as a Service's).
func familyMark(family string, markV4 bool) string {
	switch {
	case family == "ipv6":
		return " v6"
	case markV4 && family == "ipv4":
		return " v4"
	}
	return ""
}

// vmRoles names the endpoints of a result that are VMs ("server", "client", "client and
// server", or "").
func vmRoles(r *api.Result) string {
	if r.Placement == nil {
		return ""
	}
	var roles []string
	for _, e := range []api.Endpoint{r.Placement.Client, r.Placement.Server} {
		if e.VM != nil {
			roles = append(roles, e.Role)
		}
	}
	return strings.Join(roles, " and ")
}

// vmNotes are the footnotes of the cases whose endpoints are KubeVirt VMs (their PATH cells
// say "+vm"): which endpoints, the binding and vCPUs, and, when the VMs are emulated, that the
// figures measure the mechanics, not VM performance on hardware.
func vmNotes(results []api.Result) []string {
	var notes []string
	seen := map[string]bool{}
	emulated := false
	for i := range results {
		r := &results[i]
		roles := vmRoles(r)
		if roles == "" {
			continue
		}
		vm := r.Placement.Server.VM
		if vm == nil {
			vm = r.Placement.Client.VM
		}
		emulated = emulated || vm.Emulated
		what := "is a KubeVirt VM"
		if strings.Contains(roles, " and ") {
			what = "are KubeVirt VMs"
		}
		note := fmt.Sprintf("+vm: the %s %s (%s binding, %d vCPU)", roles, what, vm.Binding, vm.VCPUs)
		if !seen[note] {
			seen[note] = true
			notes = append(notes, note)
		}
	}
	if emulated {
		notes = append(notes, "+vm: the VMs ran in QEMU's software emulation (TCG, no KVM): the figures measure the mechanics, "+
			"not VM performance on hardware")
	}
	return notes
}

// networkNotes are the footnotes naming the secondary network of the run's cases (their PATH
// cells say "+net"): "+net: on secondary network multus-e2e/e2e-bridge (CNI plugin bridge, MTU 1500)".
func networkNotes(results []api.Result) []string {
	var notes []string
	seen := map[string]bool{}
	for i := range results {
		r := &results[i]
		n := r.Params.Network
		if n == "" || seen[n] {
			continue
		}
		seen[n] = true
		var a *api.Attachment
		if r.Placement != nil {
			a = r.Placement.Attachment
		}
		note := "+net: " + figure.AttachmentNote(n, a)
		notes = append(notes, note)
	}
	// NetworkPolicies asked for on a secondary network: not applied there, never silently
	var pols []string
	for i := range results {
		if r := &results[i]; r.Placement != nil && r.Placement.Attachment != nil {
			for _, np := range r.Placement.Attachment.PoliciesNotApplied {
				if !slices.Contains(pols, np) {
					pols = append(pols, np)
				}
			}
		}
	}
	if len(pols) > 0 {
		notes = append(notes, "+net: "+figure.PoliciesNotAppliedNote(pols, "+net figures"))
	}
	return notes
}

// FailureCause is the first error a result carries (see figure.FailureCause).
func FailureCause(r *api.Result) string { return figure.FailureCause(r) }

// CaseFailed reports whether a case has no usable figure: it failed as a whole or every
// measured sample failed.
func CaseFailed(r *api.Result) bool {
	return r.Error != "" || r.Summary.SamplesTotal == 0 || r.Summary.SamplesFailed >= r.Summary.SamplesTotal
}

func statusCell(r *api.Result) string {
	cause := oneLine(FailureCause(r))
	switch {
	case CaseFailed(r):
		if cause == "" {
			cause = "no successful sample"
		}
		return "FAILED: " + cause
	case r.Summary.SamplesFailed > 0:
		return "PARTIAL: " + figure.FailureSummary(r) + ": " + cause
	}
	if f, ok := figure.Main(r); ok {
		// The readers and the statistics never make one, but a NaN must never read "ok".
		if v, _ := f.Value(&r.Summary); math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Sprintf("INVALID: %s is %v", f.Label, v)
		}
	}
	return "ok"
}

func oneLine(s string) string { return text.OneLine(s, 160) }

// driverDeltas finds cases measured by several drivers in one run (same workload and
// topology, different driver) and returns, per result index, the change of its main figure's
// mean from the first driver that measured it, e.g. "−3.2% vs iperf3". The first driver's
// own row reads "ref". Results without a figure are skipped. Without long, the cell is the
// change only ("−3.2%").
func driverDeltas(results []api.Result, long bool) map[int]string {
	type group struct {
		idx     []int
		drivers map[string]bool
	}
	groups := map[string]*group{}
	var order []string
	for i := range results {
		r := &results[i]
		if _, ok := figure.Main(r); !ok {
			continue
		}
		k := figure.Workload(r) + figure.TopologyKey(r)
		g := groups[k]
		if g == nil {
			g = &group{drivers: map[string]bool{}}
			groups[k] = g
			order = append(order, k)
		}
		g.idx = append(g.idx, i)
		g.drivers[r.Driver] = true
	}
	out := map[int]string{}
	for _, k := range order {
		g := groups[k]
		if len(g.drivers) < 2 {
			continue
		}
		ref := &results[g.idx[0]]
		f, _ := figure.Main(ref)
		base := f.Stat(&ref.Summary).Mean
		out[g.idx[0]] = "ref"
		for _, i := range g.idx[1:] {
			r := &results[i]
			if r.Driver == ref.Driver {
				continue
			}
			st := f.Stat(&r.Summary)
			if st == nil {
				continue
			}
			out[i] = figure.SignedPercent(figure.ChangePercent(base, st.Mean))
			if long {
				out[i] += " vs " + ref.Driver
			}
		}
	}
	return out
}

// Sweep table columns.
const (
	swParam = iota
	swLatMean
	swP50
	swP99
	swMain
	swPPS
	swLoss
	swSamples
	swStatus
	swCols
)

// writeSweepTables prints, after a run's table, one small table per parameter sweep (seed
// 003's "number of simultaneous connections | TCP_RR latency"): the swept value, latency
// mean/p50/p99 where the profile has latency, the headline rate with its confidence
// interval, and the status. mark flags latency computed without per-transaction data, as in
// the main table (its footnotes are already printed, so only known methods are marked).
// The default view (not wide) shortens the status to its first word (the causes are under
// the run's table, by case number) and leaves columns out to fit width.
func writeSweepTables(w io.Writer, run *api.Run, mark func(string) string, wide bool, width int) error {
	for _, sw := range sweep.Find(run.Results) {
		sw := sw
		first := &run.Results[sw.Points[0].Index]
		main, _ := figure.Main(first)
		for _, pt := range sw.Points {
			if f, ok := figure.Main(&run.Results[pt.Index]); ok {
				main = f
				break
			}
		}
		t := &text.Table{
			Header: []string{sw.Param.Column, "LAT MEAN µs", "P50 µs", "P99 µs", strings.ToUpper(main.Label) + " (mean ± 95% CI)",
				"PACKETS/S", "LOSS", "SAMPLES", "STATUS"},
			Right: map[int]bool{swParam: true, swLatMean: true, swP50: true, swP99: true, swMain: true, swPPS: true, swLoss: true, swSamples: true},
			Hide:  map[int]bool{swLatMean: true, swP50: true, swP99: true, swPPS: true, swLoss: true, swStatus: true},
		}
		for _, pt := range sw.Points {
			r := &run.Results[pt.Index]
			row := make([]string, swCols)
			for i := range row {
				row[i] = "-"
			}
			row[swParam] = sw.Param.Format(pt.Value)
			if l := r.Summary.LatencyMicroseconds; l != nil {
				m := mark(l.Method)
				if l.Provenance == api.LatencyDerived {
					m = mark(api.LatencyDerived)
				}
				set := func(col int, v *float64) {
					if v != nil {
						row[col] = figure.Number(*v) + m
						t.Hide[col] = false
					}
				}
				set(swLatMean, l.Mean)
				set(swP50, l.P50)
				set(swP99, l.P99)
			}
			if st := main.Stat(&r.Summary); st != nil {
				row[swMain] = main.Unit.FormatCI(st.Mean, (st.CI95High-st.CI95Low)/2)
			}
			if main.Key != figure.PacketRate.Key {
				if st := r.Summary.PacketsPerSecond; st != nil {
					row[swPPS] = figure.PacketsPerSecond.FormatCI(st.Mean, (st.CI95High-st.CI95Low)/2)
					t.Hide[swPPS] = false
				}
			}
			if st := r.Summary.LossPercent; st != nil {
				row[swLoss] = figure.Number(st.Mean) + "%"
				t.Hide[swLoss] = false
			}
			row[swSamples] = fmt.Sprintf("%d/%d", r.Summary.SamplesTotal-r.Summary.SamplesFailed, r.Summary.SamplesTotal)
			row[swStatus] = statusCell(r)
			if row[swStatus] != "ok" {
				t.Hide[swStatus] = false
				if !wide {
					st, _, _ := strings.Cut(row[swStatus], ":")
					row[swStatus] = fmt.Sprintf("%s (#%d)", st, pt.Index+1)
				}
			}
			t.Rows = append(t.Rows, row)
		}
		var hidden []string
		if !wide {
			hidden = t.Fit(width, "    ", []int{swPPS, swLatMean, swP50, swLoss, swP99, swSamples})
		}
		if _, err := fmt.Fprintln(w); err != nil {
			return err
		}
		if err := writeWrapped(w, sweep.Title(&sw, first), width, "  ", "    "); err != nil {
			return err
		}
		if err := t.Write(w, "    "); err != nil {
			return err
		}
		if len(hidden) > 0 {
			note := fmt.Sprintf("not shown to fit %d columns: %s (-o wide shows every column)", width, strings.Join(hidden, ", "))
			if err := writeWrapped(w, note, width, "    ", "      "); err != nil {
				return err
			}
		}
		if len(sw.Duplicates) > 0 {
			idx := make([]string, len(sw.Duplicates))
			for i, d := range sw.Duplicates {
				idx[i] = "#" + strconv.Itoa(d+1)
			}
			if _, err := fmt.Fprintf(w, "    (cases %s repeat a value measured before and are not in this table)\n", strings.Join(idx, ", ")); err != nil {
				return err
			}
		}
	}
	return nil
}

// pathMTULines are the path-MTU checks of a run (cnperf run --check-mtu): each finding or
// direction that could not be probed on a line of its own, the paths without a mismatch on
// one line.
func pathMTULines(checks []api.PathMTU) []string {
	var lines, fine []string
	for _, m := range checks {
		if m.Finding == "" && m.Forward.Error == "" && m.Reverse.Error == "" {
			fine = append(fine, fmt.Sprintf("%s (%d/%d bytes)", figure.PathMTUName(m), m.Forward.LargestBytes, m.Reverse.LargestBytes))
			continue
		}
		lines = append(lines, figure.PathMTULine(m))
	}
	if len(fine) > 0 {
		lines = append(lines, "path MTU as the interfaces' both ways, no mismatch: "+strings.Join(fine, ", "))
	}
	return lines
}

// ClusterLines are the lines of the run's cluster details a person reads below the table: the
// nodes' hardware (nodes alike are named together) and the agents' idle footprint
// (--idle-footprint). None when the run has no such details.
func ClusterLines(c *api.ClusterDetails) []string {
	if c == nil {
		return nil
	}
	var lines []string
	if hw := hardwareLine(c.Nodes); hw != "" {
		lines = append(lines, hw)
	}
	if c.IdleFootprint == nil {
		return lines
	}
	fp := c.IdleFootprint
	var nodes []string
	byNode := map[string][]string{}
	for _, a := range fp.Agents {
		if _, ok := byNode[a.Node]; !ok {
			nodes = append(nodes, a.Node)
		}
		name := a.Component
		if a.Component == "other" {
			name = a.Namespace + "/" + a.Pod
		}
		mem := "memory not reported"
		if a.MemoryWorkingSetBytes != nil {
			mem = fmt.Sprintf("%.1f MiB", float64(*a.MemoryWorkingSetBytes)/(1<<20))
		}
		byNode[a.Node] = append(byNode[a.Node], fmt.Sprintf("%s %.1fm CPU %s", name, a.CPUMillicores, mem))
	}
	line := fmt.Sprintf("idle footprint before the measurement (%s, %.0f s):", fp.Source, fp.WindowSeconds)
	var parts []string
	for _, n := range nodes {
		parts = append(parts, n+": "+strings.Join(byNode[n], ", "))
	}
	if len(parts) > 0 {
		line += " " + strings.Join(parts, "; ")
	}
	if fp.Note != "" {
		if len(parts) > 0 {
			line += ";"
		}
		line += " " + fp.Note
	}
	return append(lines, line)
}

// hardwareLine is "node hardware: node1, node2: TEXT" (api.NodeHardware.Text), nodes with the
// same text together, "(from node-exporter)" after what Prometheus gave rather than the agent;
// "" when no node's hardware was read.
func hardwareLine(nodes []api.NodeInfo) string {
	var texts []string
	byText := map[string][]string{}
	for _, n := range nodes {
		t := n.Hardware.Text()
		if t == "" {
			continue
		}
		if n.Hardware.Source == api.HardwareFromNodeExporter {
			t += " (from node-exporter)"
		}
		if _, ok := byText[t]; !ok {
			texts = append(texts, t)
		}
		byText[t] = append(byText[t], n.Name)
	}
	if len(texts) == 0 {
		return ""
	}
	var parts []string
	for _, t := range texts {
		parts = append(parts, strings.Join(byText[t], ", ")+": "+t)
	}
	return "node hardware: " + strings.Join(parts, "; ")
}
