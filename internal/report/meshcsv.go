package report

import (
	"fmt"
	"io"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/meshview"
)

// encodeMeshCSV writes a mesh run's matrices as cnperf mesh -o csv does.
func encodeMeshCSV(w io.Writer, runs []*api.Run) error {
	run, err := oneMeshRun("mesh-csv", runs)
	if err != nil {
		return err
	}
	return meshview.WriteMatrixCSV(w, run)
}

// encodeMeshCellsCSV writes a mesh run's cells as cnperf mesh -o cells does.
func encodeMeshCellsCSV(w io.Writer, runs []*api.Run) error {
	run, err := oneMeshRun("mesh-cells-csv", runs)
	if err != nil {
		return err
	}
	return meshview.WriteCellsCSV(w, run)
}

// UnsuitableRunsError is returned by formats that cannot render the runs they were given (a
// mesh format given a plain run): the input is wrong, not the output.
type UnsuitableRunsError struct{ Msg string }

func (e *UnsuitableRunsError) Error() string { return e.Msg }

// oneMeshRun is the single mesh run the mesh CSV formats take: their rows carry no run
// column, so the cells of two runs could not be told apart.
func oneMeshRun(format string, runs []*api.Run) (*api.Run, error) {
	if len(runs) != 1 {
		return nil, &UnsuitableRunsError{fmt.Sprintf("-o %s renders one mesh run (its rows name no run), got %d runs", format, len(runs))}
	}
	if runs[0].Mesh == nil {
		return nil, &UnsuitableRunsError{fmt.Sprintf("-o %s: run %s is not a mesh run (only runs saved by cnperf mesh have matrices)", format, runs[0].UUID)}
	}
	return runs[0], nil
}
