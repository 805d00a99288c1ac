package local

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/driver/all"
	"github.com/cnperf/cnperf/internal/hostport"
	"github.com/cnperf/cnperf/internal/plan"
)

// Two local runs that start their servers at the same moment both get one that listens: the
// first on the ports asked for, the other moved to free ones. Without the host's port lock both
// found the ports free and the later one's server failed to bind ("exited before it was
// ready", checked by removing the lock). Real netservers, several rounds, since the race is one
// of timing. Every other round asks for three flows (a control port and three consecutive data
// ports): such a server was not moved at all (its data ports must stay consecutive, which
// ports picked one by one were not) and the later run failed with the same bind error.
func TestConcurrentRunsGetTheirOwnPorts(t *testing.T) {
	if _, err := exec.LookPath("netserver"); err != nil {
		t.Skip("netserver is not installed")
	}
	d, err := all.Get("netperf")
	if err != nil {
		t.Fatal(err)
	}
	drivers := map[string]driver.Driver{"netperf": d}
	for round := 0; round < 5; round++ {
		// The ports both runs ask for: free ones of this test's own, not netserver's 12865,
		// which the integration tests of the same `go test ./...` need free at that moment.
		flows := 1 + 2*(round%2)
		base, err := hostport.Block(1 + flows)
		if err != nil {
			t.Fatal(err)
		}
		cases := []plan.Case{{Profile: api.TCPRR, Path: api.PathLoopback, Driver: "netperf", Params: api.Params{DurationSeconds: 1, Samples: 1,
			Parallel: flows, Options: map[string]string{"port": strconv.Itoa(base), "dataPort": strconv.Itoa(base + 1)}}}}
		var (
			done  sync.WaitGroup
			ps    [2]*Platform
			logs  [2]strings.Builder
			errs  [2]error
			start = make(chan struct{})
		)
		for i := range ps {
			ps[i] = New(Options{}, &logs[i])
			done.Add(1)
			go func() {
				defer done.Done()
				<-start
				errs[i] = ps[i].Prepare(context.Background(), cases, drivers)
			}()
		}
		close(start)
		done.Wait()
		time.Sleep(200 * time.Millisecond) // a server that lost the port exits at once
		ports := map[int]bool{}
		for i, p := range ps {
			if errs[i] != nil {
				t.Errorf("round %d, run %d: %v\n%s", round, i, errs[i], logs[i].String())
			}
			p.mu.Lock()
			for _, sp := range p.servers {
				select {
				case <-sp.done:
					t.Errorf("round %d, run %d: its server exited: %s\n%s", round, i, sp.output.Bytes(), logs[i].String())
				default:
				}
				ports[sp.spec.Ports[0].Port] = true
			}
			p.mu.Unlock()
		}
		if len(ports) != 2 {
			t.Errorf("round %d: the two runs' servers share control ports %v", round, ports)
		}
		for _, p := range ps {
			_ = p.Close(context.Background())
		}
		if t.Failed() {
			return
		}
	}
}
