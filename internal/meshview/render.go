package meshview

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/figure"
	"github.com/cnperf/cnperf/internal/text"
)

// metricOf finds the mesh's metric (by field name).
func metricOf(m *api.Mesh) Metric {
	if mt, err := LookupMetric(m.Metric, m.Profile); err == nil {
		return mt
	}
	return Metric{Name: m.Metric, Field: m.Metric, Unit: m.Unit, Display: m.Unit, Scale: 1, HigherIsBetter: m.HigherIsBetter}
}

// Title names a matrix: profile, driver, network, the Service it went through and, for
// all-to-one, whether the clients ran at once.
func Title(m *api.Mesh, mat *api.MeshMatrix) string {
	t := fmt.Sprintf("%s %s, %s network", m.Profile, m.Driver, mat.Network)
	if mat.Via != "" {
		t += ", " + mat.Via
	}
	if m.Mode == "all-to-one" {
		if mat.Concurrent {
			t += ", all clients at once"
		} else {
			t += ", one client at a time"
		}
	}
	return t
}

// cellIndex maps (client, server) to a matrix's cell.
func cellIndex(mat *api.MeshMatrix) map[[2]string]*api.MeshCell {
	idx := make(map[[2]string]*api.MeshCell, len(mat.Cells))
	for i := range mat.Cells {
		c := &mat.Cells[i]
		idx[[2]string{c.Client, c.Server}] = c
	}
	return idx
}

// WriteTable prints every matrix of a run: the metric (rows are clients, columns servers;
// "!" marks an outlier, "×" a failed pair, "·" a pair not measured), the node CPU of each
// cell (client node / server node, busy % of all CPUs), the outliers and the failures.
func WriteTable(w io.Writer, run *api.Run) error {
	m := run.Mesh
	if m == nil {
		return fmt.Errorf("the run has no mesh")
	}
	mt := metricOf(m)
	for mi := range m.Matrices {
		if mi > 0 {
			fmt.Fprintln(w)
		}
		if err := writeMatrix(w, run, mt, &m.Matrices[mi]); err != nil {
			return err
		}
	}
	if m.Sampled && m.Seed != nil {
		fmt.Fprintf(w, "\nsampled %d of %d pairs (seed %d) in %d rounds\n", m.Pairs, m.PairsTotal, *m.Seed, m.Rounds)
	}
	return nil
}

// writeMatrix prints one matrix: its title, the metric's grid, its secondary network, the
// node CPU grid when the cells have it, the spread, the outliers and the failures.
func writeMatrix(w io.Writer, run *api.Run, mt Metric, mat *api.MeshMatrix) error {
	m := run.Mesh
	idx := cellIndex(mat)
	cols := m.Columns(mat)
	// wrapped: a long network name, an all-to-one's way and schedule make it long
	fmt.Fprintln(w, strings.Join(text.Wrap(fmt.Sprintf("%s: %s (%s), rows = client, columns = server", Title(m, mat), mt.Name, mt.Display),
		text.DefaultWidth, "", "  "), "\n"))
	hasCPU, err := writeMetricGrid(w, run, mt, idx, cols)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "(! outlier, × failed, · not measured)")
	if a := mat.Attachment; a != nil {
		// a secondary network: what it is, and the NetworkPolicies that do not filter it
		fmt.Fprintln(w, strings.Join(text.Wrap(figure.AttachmentNote(mat.Network, a), text.DefaultWidth, "", "  "), "\n"))
		if len(a.PoliciesNotApplied) > 0 {
			fmt.Fprintln(w, strings.Join(text.Wrap(figure.PoliciesNotAppliedNote(a.PoliciesNotApplied, "figures"), text.DefaultWidth, "", "  "), "\n"))
		}
	}
	if hasCPU {
		if err := writeCPUGrid(w, run, idx, cols); err != nil {
			return err
		}
	}
	writeSpread(w, m, mt, mat)
	return nil
}

// gridHeader starts a grid: the corner and a column per server.
func gridHeader(w io.Writer, cols []string) *tabwriter.Writer {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "client \\ server\t")
	for _, c := range cols {
		fmt.Fprintf(tw, "%s\t", c)
	}
	fmt.Fprintln(tw)
	return tw
}

// writeMetricGrid prints the metric of each client and server (a row per client with a
// cell), and reports whether any cell's result has the nodes' CPU.
func writeMetricGrid(w io.Writer, run *api.Run, mt Metric, idx map[[2]string]*api.MeshCell, cols []string) (hasCPU bool, err error) {
	tw := gridHeader(w, cols)
	for _, cl := range run.Mesh.Nodes {
		row := false
		for _, sv := range cols {
			if idx[[2]string{cl, sv}] != nil {
				row = true
			}
		}
		if !row {
			continue
		}
		fmt.Fprintf(tw, "%s\t", cl)
		for _, sv := range cols {
			c := idx[[2]string{cl, sv}]
			switch {
			case c == nil:
				fmt.Fprint(tw, "·\t")
			case c.Value == nil:
				fmt.Fprint(tw, "×\t")
			default:
				s := FormatValue(mt, *c.Value)
				if c.Outlier {
					s += " !"
				}
				fmt.Fprintf(tw, "%s\t", s)
			}
			if c != nil && c.Result >= 0 && c.Result < len(run.Results) && run.Results[c.Result].NodeResources != nil {
				hasCPU = true
			}
		}
		fmt.Fprintln(tw)
	}
	return hasCPU, tw.Flush()
}

// writeCPUGrid prints the node CPU of each cell: client node / server node, busy % of all
// CPUs over the cell's window.
func writeCPUGrid(w io.Writer, run *api.Run, idx map[[2]string]*api.MeshCell, cols []string) error {
	fmt.Fprintf(w, "node CPU busy %% of all CPUs (client node / server node) over each window:\n")
	tw := gridHeader(w, cols)
	for _, cl := range run.Mesh.Nodes {
		line := []string{}
		any := false
		for _, sv := range cols {
			c := idx[[2]string{cl, sv}]
			s := "·"
			if c != nil {
				any = true
				s = cpuPair(run, c)
			}
			line = append(line, s)
		}
		if any {
			fmt.Fprintf(tw, "%s\t%s\t\n", cl, strings.Join(line, "\t"))
		}
	}
	return tw.Flush()
}

// writeSpread prints the matrix's median, MAD and outlier threshold (or that it has none),
// then its outliers and its failed pairs.
func writeSpread(w io.Writer, m *api.Mesh, mt Metric, mat *api.MeshMatrix) {
	if mat.Median != nil {
		side, op := "below", "−"
		if !m.HigherIsBetter {
			side, op = "above", "+"
		}
		fmt.Fprintf(w, "median %s %s, MAD %s %s; outliers (!) are %s median %s %g·MAD = %s %s\n",
			FormatValue(mt, *mat.Median), mt.Display, FormatValue(mt, *mat.MAD), mt.Display, side, op, m.OutlierMADs,
			FormatValue(mt, *mat.Threshold), mt.Display)
	} else {
		fmt.Fprintf(w, "fewer than %d successful pairs: no outlier detection\n", MinCellsForOutliers)
	}
	for _, c := range mat.Cells {
		if c.Outlier {
			fmt.Fprintf(w, "  outlier: %s → %s %s %s\n", c.Client, c.Server, FormatValue(mt, *c.Value), mt.Display)
		}
	}
	for _, c := range mat.Cells {
		if c.Error != "" {
			fmt.Fprintf(w, "  failed: %s → %s: %s\n", c.Client, c.Server, c.Error)
		}
	}
}

func cpuPair(run *api.Run, c *api.MeshCell) string {
	if c.Result < 0 || c.Result >= len(run.Results) {
		return "-"
	}
	nr := run.Results[c.Result].NodeResources
	if nr == nil {
		return "-"
	}
	f := func(r *api.NodeResources) string {
		if r == nil {
			return "-"
		}
		return strconv.FormatFloat(r.CPUTotalPercent, 'f', 0, 64)
	}
	return f(nr.Client) + "/" + f(nr.Server)
}

// WriteMatrixCSV writes each matrix as CSV: a header row "network,via,client\server,<server
// nodes...>" and one row per client, values in the metric's base unit (empty: not measured
// or failed).
func WriteMatrixCSV(w io.Writer, run *api.Run) error {
	m := run.Mesh
	if m == nil {
		return fmt.Errorf("the run has no mesh")
	}
	cw := csv.NewWriter(w)
	for mi := range m.Matrices {
		mat := &m.Matrices[mi]
		idx := cellIndex(mat)
		cols := m.Columns(mat)
		head := append([]string{"network", "via", "metric", "unit", `client\server`}, cols...)
		if err := cw.Write(head); err != nil {
			return err
		}
		for _, cl := range m.Nodes {
			row := []string{mat.Network, mat.Via, m.Metric, m.Unit, cl}
			any := false
			for _, sv := range cols {
				c := idx[[2]string{cl, sv}]
				if c != nil {
					any = true
				}
				if c == nil || c.Value == nil {
					row = append(row, "")
					continue
				}
				row = append(row, strconv.FormatFloat(*c.Value, 'g', -1, 64))
			}
			if any {
				if err := cw.Write(row); err != nil {
					return err
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// CellsCSVHeader is the header of WriteCellsCSV.
var CellsCSVHeader = []string{"network", "via", "concurrent", "round", "client", "server", "path", "metric", "unit", "value", "outlier", "error",
	"client_cpu_total_percent", "client_cpu_user_percent", "client_cpu_system_percent", "client_cpu_softirq_percent", "client_cpu_steal_percent", "client_memory_used_bytes",
	"server_cpu_total_percent", "server_cpu_user_percent", "server_cpu_system_percent", "server_cpu_softirq_percent", "server_cpu_steal_percent", "server_memory_used_bytes"}

// WriteCellsCSV writes one row per cell with the value and both nodes' resources.
func WriteCellsCSV(w io.Writer, run *api.Run) error {
	m := run.Mesh
	if m == nil {
		return fmt.Errorf("the run has no mesh")
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(CellsCSVHeader); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
	node := func(r *api.NodeResources) []string {
		if r == nil {
			return []string{"", "", "", "", "", ""}
		}
		return []string{f(r.CPUTotalPercent), f(r.CPUUserPercent), f(r.CPUSystemPercent), f(r.CPUSoftIRQPercent), f(r.CPUStealPercent),
			strconv.FormatInt(r.MemoryUsedEndBytes, 10)}
	}
	for _, mat := range m.Matrices {
		for _, c := range mat.Cells {
			val := ""
			if c.Value != nil {
				val = strconv.FormatFloat(*c.Value, 'g', -1, 64)
			}
			path := ""
			var nr *api.NodeResourcesPair
			if c.Result >= 0 && c.Result < len(run.Results) {
				path = string(run.Results[c.Result].Path)
				nr = run.Results[c.Result].NodeResources
			}
			if nr == nil {
				nr = &api.NodeResourcesPair{}
			}
			row := []string{mat.Network, mat.Via, strconv.FormatBool(mat.Concurrent), strconv.Itoa(c.Round + 1), c.Client, c.Server, path,
				m.Metric, m.Unit, val, strconv.FormatBool(c.Outlier), c.Error}
			row = append(row, node(nr.Client)...)
			row = append(row, node(nr.Server)...)
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
