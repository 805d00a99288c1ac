package keyval

import (
	"errors"
	"maps"
	"testing"

	"github.com/cnperf/cnperf/internal/exit"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in      []string
		want    map[string]string
		wantErr string
	}{
		{in: nil, want: nil},
		{in: []string{"cni=calico", "mtu=1450", "empty="}, want: map[string]string{"cni": "calico", "mtu": "1450", "empty": ""}},
		{in: []string{"a=b=c"}, want: map[string]string{"a": "b=c"}},
		{in: []string{" disk = ssd"}, want: map[string]string{"disk": " ssd"}},
		{in: []string{"a=1", "a=2"}, want: map[string]string{"a": "2"}},
		{in: []string{"cni"}, wantErr: `--flag: "cni" is not KEY=VALUE`},
		{in: []string{"=calico"}, wantErr: `--flag: "=calico" is not KEY=VALUE`},
		{in: []string{" =calico"}, wantErr: `--flag: " =calico" is not KEY=VALUE`},
	}
	for _, tt := range tests {
		got, err := Parse("--flag", tt.in)
		if tt.wantErr != "" {
			var ue *exit.UsageError
			if !errors.As(err, &ue) || err.Error() != tt.wantErr {
				t.Errorf("%q: error %v, want the usage error %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || (tt.want == nil) != (got == nil) || !maps.Equal(got, tt.want) {
			t.Errorf("%q: %v, %v, want %v", tt.in, got, err, tt.want)
		}
	}
}
