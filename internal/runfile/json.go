package runfile

import (
	"encoding/json"
	"fmt"
	"io"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// WriteJSON writes one run as an indented JSON object, exactly as the api types marshal it;
// several runs become a JSON array of such objects. ReadRuns reads both back.
func WriteJSON(w io.Writer, runs []*api.Run) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	var v any = runs
	if len(runs) == 1 {
		v = runs[0]
	}
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode json: %w", err)
	}
	return nil
}
