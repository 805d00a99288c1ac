package plan

import (
	"fmt"
	"strings"
)

// FieldError is one problem in a plan, at a field path such as "tests[1].profiles[0]",
// "defaults.duration" or "tests" (paths use the plan's YAML field names).
type FieldError struct {
	Path    string
	Message string
}

func (e FieldError) String() string {
	if e.Path == "" {
		return e.Message
	}
	return e.Path + ": " + e.Message
}

// FieldErrors is every problem found in a plan, in plan order. Validation returns all of them
// at once rather than stopping at the first.
type FieldErrors struct {
	Errors []FieldError
	seen   map[FieldError]bool
}

// Error renders one problem per line.
func (e *FieldErrors) Error() string {
	lines := make([]string, len(e.Errors))
	for i, fe := range e.Errors {
		lines[i] = fe.String()
	}
	return strings.Join(lines, "\n")
}

// Add records a problem; an identical (path, message) pair is recorded once.
func (e *FieldErrors) Add(path, format string, a ...any) {
	msg := format
	if len(a) > 0 {
		msg = fmt.Sprintf(format, a...)
	}
	fe := FieldError{Path: path, Message: msg}
	if e.seen == nil {
		e.seen = map[FieldError]bool{}
		for _, old := range e.Errors {
			e.seen[old] = true
		}
	}
	if e.seen[fe] {
		return
	}
	e.seen[fe] = true
	e.Errors = append(e.Errors, fe)
}

// Len is the number of problems.
func (e *FieldErrors) Len() int {
	if e == nil {
		return 0
	}
	return len(e.Errors)
}

// Err returns e when it holds problems and nil otherwise.
func (e *FieldErrors) Err() error {
	if e.Len() == 0 {
		return nil
	}
	return e
}
