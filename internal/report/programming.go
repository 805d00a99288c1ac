package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/figure"
	"github.com/cnperf/cnperf/internal/text"
)

// Columns of the programming view.
const (
	progColProfile = iota
	progColNode
	progColVia
	progColPolicies
	progColOK
	progColP50
	progColP90
	progColP99
	progColMax
	progColClock
)

// writeProgrammingTable prints the programming results of a run (cnperf programming): per
// profile and client node, the percentiles of the changes with their 95% intervals, and the
// node's clock offset, then what bounds each figure's error. Nothing when the run has none.
func writeProgrammingTable(w io.Writer, run *api.Run, width int) error {
	t := text.Table{
		Header: []string{"CHANGE", "CLIENT NODE", "VIA", "POLICIES", "OK", "P50 [95% CI]", "P90 [95% CI]", "P99", "MAX", "CLOCK OFFSET"},
		Right:  map[int]bool{progColPolicies: true, progColOK: true, progColP99: true, progColMax: true},
	}
	var bound float64
	var floor *api.ProbeFloor
	interval, shared, all := 0.0, 0, 0
	var failed []string
	for i := range run.Results {
		r := &run.Results[i]
		p := r.Programming
		if p == nil {
			continue
		}
		all++
		if p.SharedClock {
			shared++
		}
		bound = max(bound, p.ErrorBoundSeconds)
		if floor == nil {
			floor = p.ProbeFloor
		}
		interval = p.ProbeIntervalSeconds
		node := ""
		if r.Placement != nil {
			node = r.Placement.Client.Node
		}
		ok := r.Summary.SamplesTotal - r.Summary.SamplesFailed
		row := []string{string(r.Profile), node, viaCell(r), strconv.Itoa(p.StandingPolicies), fmt.Sprintf("%d/%d", ok, r.Params.Samples),
			"-", "-", "-", "-", clockCell(p)}
		if r.Profile != api.PolicyDeny && r.Profile != api.PolicyAllow {
			row[progColPolicies] = "-"
		}
		for _, q := range p.Percentiles {
			switch q.Quantile {
			case 0.5:
				row[progColP50] = percentileCell(q)
			case 0.9:
				row[progColP90] = percentileCell(q)
			case 0.99:
				row[progColP99] = figure.Seconds.Format(q.Seconds)
			case 1:
				row[progColMax] = figure.Seconds.Format(q.Seconds)
			}
		}
		t.Rows = append(t.Rows, row)
		if r.Error != "" {
			failed = append(failed, fmt.Sprintf("%s from %s via %s: %s", r.Profile, node, viaCell(r), r.Error))
		}
	}
	if all == 0 {
		return nil
	}
	if _, err := fmt.Fprintln(w, "\nHow fast the network obeyed (from the API call's return to the first confirmed connect in the new state):"); err != nil {
		return err
	}
	// Beyond the clock and p99, the column that tells the rows least apart goes first: VIA in a
	// run of policies only (all "pod IP"), POLICIES in one of Services only (all "-").
	drop := []int{progColClock, progColP99, progColPolicies, progColVia}
	if sameColumn(t.Rows, progColVia) && !sameColumn(t.Rows, progColPolicies) {
		drop[2], drop[3] = progColVia, progColPolicies
	}
	hid := t.Fit(width, "  ", drop)
	if err := t.Write(w, "  "); err != nil {
		return err
	}
	if len(hid) > 0 {
		if _, err := fmt.Fprintf(w, "  (left out to fit %d columns: %s; -o json has them)\n", width, strings.Join(hid, ", ")); err != nil {
			return err
		}
	}
	note := fmt.Sprintf("Each figure is late by up to one probe interval (%s) and off by at most the clock offset's bound; "+
		"together at most %s. A percentile's interval is distribution-free (order statistics); \"-\" where too few changes bound it.",
		figure.Seconds.Format(interval), figure.Seconds.Format(bound))
	if shared == all {
		note += " Every client node runs on cnperf's own kernel (same boot id): one clock, no offset applied " +
			"(the offsets exec measured, in -o json, show how loose that measurement is)."
	}
	if floor != nil {
		note += " " + floorSaid(floor)
	}
	if err := writeWrapped(w, note, width, "  ", "  "); err != nil {
		return err
	}
	for _, f := range failed {
		if err := writeWrapped(w, "failed: "+f, width, "  ", "    "); err != nil {
			return err
		}
	}
	return writeComponentFigures(w, run, width)
}

// writeComponentFigures prints the components' own figures (kube-proxy's, Felix's) beside
// cnperf's mean of the same changes, once per change, client node and number of standing
// policies (a node's ClusterIP and NodePort results share them), and what makes them differ.
// The POLICIES column is there when a policy result is.
func writeComponentFigures(w io.Writer, run *api.Run, width int) error {
	t := text.Table{Header: []string{"CHANGE", "CLIENT NODE", "POLICIES", "OBSERVED", "ITS MEAN", "CNPERF'S MEAN", "DIFFERENCE"},
		Right: map[int]bool{2: true, 3: true, 4: true, 5: true, 6: true}}
	seen := map[string]bool{}
	policies := false
	var notes, metrics []string
	for i := range run.Results {
		r := &run.Results[i]
		if r.Programming == nil || r.Programming.Component == nil || r.Placement == nil {
			continue
		}
		c := r.Programming.Component
		key := fmt.Sprintf("%s|%s|%d", r.Profile, r.Placement.Client.Node, r.Programming.StandingPolicies)
		if seen[key] {
			continue
		}
		seen[key] = true
		row := []string{string(r.Profile), r.Placement.Client.Node, "-", strconv.FormatFloat(c.Count, 'f', -1, 64), "-", "-", "-"}
		if r.Profile == api.PolicyDeny || r.Profile == api.PolicyAllow {
			row[2], policies = strconv.Itoa(r.Programming.StandingPolicies), true
		}
		if !slices.Contains(metrics, c.Metric) {
			metrics = append(metrics, c.Metric)
		}
		var mine *float64
		if st := r.Summary.ProgrammingSeconds; st != nil {
			mine = &st.Mean
			row[5] = figure.Seconds.Format(st.Mean)
		}
		if c.Count > 0 {
			row[4] = figure.Seconds.Format(c.MeanSeconds)
			if mine != nil {
				d := c.MeanSeconds - *mine
				sign := "+"
				if d < 0 {
					sign, d = "-", -d
				}
				row[6] = sign + figure.Seconds.Format(d)
			}
		}
		t.Rows = append(t.Rows, row)
		if c.Note != "" && !slices.Contains(notes, c.Note) {
			notes = append(notes, c.Note)
		}
	}
	if len(t.Rows) == 0 {
		return nil
	}
	if !policies {
		t.Hide = map[int]bool{2: true}
	}
	if _, err := fmt.Fprintln(w); err != nil {
		return err
	}
	head := "The components' own figures over the same changes, their mean beside cnperf's (" + strings.Join(metrics, ", ") + "):"
	if err := writeWrapped(w, head, width, "", "  "); err != nil {
		return err
	}
	if err := t.Write(w, "  "); err != nil {
		return err
	}
	for _, n := range notes {
		if err := writeWrapped(w, n+".", width, "  ", "  "); err != nil {
			return err
		}
	}
	return nil
}

func sameColumn(rows [][]string, col int) bool {
	for _, r := range rows {
		if r[col] != rows[0][col] {
			return false
		}
	}
	return true
}

// via says what a programming result's clients connected to, from the path's row: the kind
// of Service, or the server pod's own IP.
func via(p api.Path) string {
	row, _ := p.Row()
	switch {
	case row.Access == api.AccessClusterIP:
		return "ClusterIP"
	case row.Access == api.AccessNodePort:
		return "NodePort"
	case row.Access == api.AccessDirect && row.ServerNetwork == api.NetworkPod:
		return "pod IP"
	}
	return string(p)
}

// viaCell is via and the IP family the probe used, when the result records it (a Service's
// ClusterIP and NodePort results do, from the Service the API server returned): "ClusterIP v4",
// "NodePort v6".
func viaCell(r *api.Result) string { return via(r.Path) + familyMark(r.Params.IPFamily, true) }

func percentileCell(q api.Percentile) string {
	lo, hi := "-", "-"
	if q.CILow != nil {
		lo = figure.Seconds.Format(*q.CILow)
	}
	if q.CIHigh != nil {
		hi = figure.Seconds.Format(*q.CIHigh)
	}
	return fmt.Sprintf("%s [%s, %s]", figure.Seconds.Format(q.Seconds), lo, hi)
}

func clockCell(p *api.Programming) string {
	return fmt.Sprintf("%+.2f ±%.2f ms", p.ClockOffsetSeconds*1e3, p.ClockUncertaintySeconds*1e3)
}

// floorSaid states the probe's floor a run measured: what a change with no latency got.
func floorSaid(f *api.ProbeFloor) string {
	var p50, top string
	for _, q := range f.Percentiles {
		switch q.Quantile {
		case 0.5:
			p50 = figure.Seconds.Format(q.Seconds)
		case 1:
			top = figure.Seconds.Format(q.Seconds)
		}
	}
	if f.Changes == 0 || p50 == "" {
		return "The probe's floor was not measured: " + f.Error + "."
	}
	s := fmt.Sprintf("The probe's own floor, measured on cnperf's machine (%d changes with no latency: a loopback listener "+
		"closed and opened at random moments, probed the same way): median %s, at most %s; a figure that low is the method's, "+
		"not the network's.", f.Changes, p50, top)
	if f.Error != "" {
		s += " (" + f.Error + ")"
	}
	return s
}
