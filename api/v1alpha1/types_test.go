package v1alpha1

import (
	"encoding/json"
	"testing"
)

// TestTimingTeardownAbsent: a teardown that was not measured (cnperf mesh writes its output
// before it cleans up) is absent from the JSON, not a 0; a measured one is written.
func TestTimingTeardownAbsent(t *testing.T) {
	for _, c := range []struct {
		name   string
		timing Timing
		want   string
	}{
		{"not measured", Timing{SetupSeconds: 1.5, MeasureSeconds: 20},
			`{"setupSeconds":1.5,"measureSeconds":20}`},
		{"measured", Timing{SetupSeconds: 1.5, MeasureSeconds: 20, TeardownSeconds: 0.25},
			`{"setupSeconds":1.5,"measureSeconds":20,"teardownSeconds":0.25}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := json.Marshal(c.timing)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != c.want {
				t.Errorf("got %s, want %s", b, c.want)
			}
		})
	}
}
