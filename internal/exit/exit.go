// Package exit maps errors to cnperf's documented exit codes:
//
//	0  everything ran and every case passed
//	1  something failed while running: a case, a sample, a gate (tolerance, regression), an
//	   interruption, indexing into OpenSearch, the cluster, the lab or the agent
//	2  bad usage or bad input (flags, plan file, results files), detected before anything ran
//
// and 128 + the signal's number (130, 143) for a process ended by SIGINT/SIGTERM before it
// had anything to clean up, or by a third signal (internal/interrupt exits with it), 141 when
// a closed standard output or error ends it with SIGPIPE (the Go runtime's default).
//
// README.md's "Exit codes" table says the same; keep the two together.
//
// Only main calls os.Exit; everything below returns errors wrapped in these types.
package exit

import (
	"errors"
	"fmt"
)

// Codes.
const (
	OK       = 0
	Failed   = 1
	BadInput = 2
)

// UsageError is bad usage or bad input: exit code 2.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Usage wraps err (or a formatted message) as a UsageError.
func Usage(format string, a ...any) error { return &UsageError{Err: fmt.Errorf(format, a...)} }

// FailureError means the run completed but something failed or a gate was exceeded: exit 1.
type FailureError struct{ Err error }

func (e *FailureError) Error() string { return e.Err.Error() }
func (e *FailureError) Unwrap() error { return e.Err }

// Failure wraps a formatted message as a FailureError.
func Failure(format string, a ...any) error { return &FailureError{Err: fmt.Errorf(format, a...)} }

// Code returns the exit code for err.
func Code(err error) int {
	if err == nil {
		return OK
	}
	var u *UsageError
	if errors.As(err, &u) {
		return BadInput
	}
	return Failed
}
