// Package sample is the source of ../sample.jsonl, captured with
// `go test -json -count=1 . > ../sample.jsonl` in this folder (it fails on purpose).
package sample

import "testing"

func TestPasses(t *testing.T) { t.Log("a log line of a passing test") }

func TestFails(t *testing.T) {
	t.Log("before the failure")
	t.Errorf("want 2, got %d", 3)
}

func TestSkips(t *testing.T) {
	t.Log("looking for netperf")
	t.Skip("netperf not installed: run .ci/install-deps.sh")
}

func TestSubtests(t *testing.T) {
	t.Run("ok", func(t *testing.T) {})
	t.Run("skipped", func(t *testing.T) { t.Skip("no root") })
}
