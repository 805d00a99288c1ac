package toolkit

import (
	"errors"
	"reflect"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/plan"
)

// fakeJob is a job with two options read, for TestJob.
type fakeJob struct {
	port int
	on   bool
}

func (fakeJob) Servers() []driver.Server                             { return nil }
func (fakeJob) Client(driver.Target, bool) ([]driver.Command, error) { return nil, nil }
func (fakeJob) Parse([]driver.Output) (api.Sample, error)            { return api.Sample{}, nil }

// TestJob: Job parses the options once, the reads keep the first bad value's error, a check
// of the driver's own on a bad value's zero is superseded by that error, and a bad option
// leaves no job.
func TestJob(t *testing.T) {
	errCheck := errors.New("port 7 is taken")
	read := func(c plan.Case, o *Options) (fakeJob, error) {
		j := fakeJob{port: o.Port("port", 5000), on: o.Bool("on", false)}
		if j.port == 7 || j.port == 0 {
			return fakeJob{}, errCheck
		}
		return j, nil
	}
	tests := []struct {
		name    string
		opts    map[string]string
		want    fakeJob
		wantErr string
	}{
		{name: "defaults", want: fakeJob{port: 5000}},
		{name: "set", opts: map[string]string{"port": "6000", "on": "yes"}, want: fakeJob{port: 6000, on: true}},
		{name: "bad bool", opts: map[string]string{"on": "maybe"}, wantErr: `fake option "on": "maybe" is not a boolean`},
		{name: "first bad value", opts: map[string]string{"port": "x", "on": "maybe"}, wantErr: `fake option "port": "x" is not an integer`},
		{name: "bad value supersedes the check on its zero", opts: map[string]string{"port": "70000"}, wantErr: `fake option "port": 70000 is outside [1, 65535]`},
		{name: "the driver's own check", opts: map[string]string{"port": "7"}, wantErr: "port 7 is taken"},
		{name: "unknown prefixed key", opts: map[string]string{"fake.nope": "1"}, wantErr: `unknown fake option "fake.nope" (known: port, on)`},
	}
	for _, tt := range tests {
		c := plan.Case{Params: api.Params{Options: tt.opts}}
		j, err := Job("fake", c, []string{"port", "on"}, read)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr || j != nil {
				t.Errorf("%s: %v, %v; want no job and %q", tt.name, j, err, tt.wantErr)
			}
			continue
		}
		if err != nil || j != tt.want {
			t.Errorf("%s: %v, %v; want %v", tt.name, j, err, tt.want)
		}
	}
}

// A PortServer is moved with its control port and the consecutive data ports of its flows;
// data ports that are not consecutive (flow i listens on the data port + i) are refused.
func TestPortServerOptions(t *testing.T) {
	for _, c := range []struct {
		ports []int
		want  map[string]string
	}{
		{[]int{20000, 20001}, map[string]string{"port": "20000", "dataPort": "20001"}},
		{[]int{20000, 20001, 20002, 20003}, map[string]string{"port": "20000", "dataPort": "20001"}},
		{[]int{20000, 15000, 15001}, map[string]string{"port": "20000", "dataPort": "15000"}},
		{[]int{20000, 20001, 20003}, nil},
		{[]int{20000, 20002, 20001}, nil},
		{[]int{20000}, nil},
		{nil, nil},
	} {
		if got := PortServerOptions(c.ports, "port", "dataPort"); !reflect.DeepEqual(got, c.want) {
			t.Errorf("PortServerOptions(%v) = %v, want %v", c.ports, got, c.want)
		}
	}
}
