package report

import (
	"bytes"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/runfile"
)

// encodeYAML writes the runs as -o json does, in YAML (the same field names, as kubectl -o
// yaml): one run as a mapping, several as a sequence.
func encodeYAML(w io.Writer, runs []*api.Run) error {
	var b bytes.Buffer
	if err := runfile.WriteJSON(&b, runs); err != nil {
		return err
	}
	y, err := yaml.JSONToYAML(b.Bytes())
	if err != nil {
		return fmt.Errorf("encode yaml: %w", err)
	}
	_, err = w.Write(y)
	return err
}
