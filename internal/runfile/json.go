package runfile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// WriteJSON writes one run as an indented JSON object, exactly as the api types marshal it;
// several runs become a JSON array of such objects. ReadRuns reads both back.
//
// It streams: a run's results are encoded one at a time, so the memory it needs is that of
// one result, not of the whole output (which is several times the runs' size in memory).
func WriteJSON(w io.Writer, runs []*api.Run) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	var err error
	switch len(runs) {
	case 0:
		_, err = bw.WriteString("[]\n")
	case 1:
		err = writeRunJSON(bw, runs[0], "")
		if err == nil {
			err = bw.WriteByte('\n')
		}
	default:
		_, err = bw.WriteString("[\n")
		for i, r := range runs {
			if err == nil && i > 0 {
				_, err = bw.WriteString(",\n")
			}
			if err == nil {
				_, err = bw.WriteString("  ")
			}
			if err == nil {
				err = writeRunJSON(bw, r, "  ")
			}
		}
		if err == nil {
			_, err = bw.WriteString("\n]\n")
		}
	}
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return fmt.Errorf("encode json: %w", err)
	}
	return nil
}

// writeRunJSON writes run as json.MarshalIndent(run, prefix, "  ") does, byte for byte, but
// with its results marshalled one by one into the place of the run's empty "results": [].
func writeRunJSON(w *bufio.Writer, run *api.Run, prefix string) error {
	if run == nil {
		_, err := w.WriteString("null")
		return err
	}
	hdr := *run
	hdr.Results = []api.Result{}
	b, err := json.MarshalIndent(&hdr, prefix, "  ")
	if err != nil {
		return err
	}
	key := []byte("\n" + prefix + "  \"results\": []")
	if len(run.Results) == 0 {
		_, err = w.Write(b)
		return err
	}
	i := bytes.Index(b, key)
	if i < 0 { // never with api.Run as it marshals; a run must not be written without its results
		return fmt.Errorf("run %s: no %q in its JSON to put its results in", run.UUID, "results")
	}
	at := i + len(key) - 1 // the "]" of "[]"
	if _, err := w.Write(b[:at]); err != nil {
		return err
	}
	inner := prefix + "    "
	for j := range run.Results {
		rb, err := json.MarshalIndent(&run.Results[j], inner, "  ")
		if err != nil {
			return err
		}
		sep := ",\n"
		if j == 0 {
			sep = "\n"
		}
		if _, err := w.WriteString(sep + inner); err != nil {
			return err
		}
		if _, err := w.Write(rb); err != nil {
			return err
		}
	}
	if _, err := w.WriteString("\n" + prefix + "  "); err != nil {
		return err
	}
	_, err = w.Write(b[at:])
	return err
}
