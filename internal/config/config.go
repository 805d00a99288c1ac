// Package config reads test plans from files: cnperf's own plan (apiVersion cnperf.dev/v1alpha1,
// kind Plan), k8s-netperf's netperf.yml (v1 and v2) and tiger-bench's testconfig.yaml. Every
// format becomes the same *v1alpha1.Plan, decoded strictly: an unknown field, a duplicate key, a
// wrong type or a bad value is an error that names the file, the line and the field. The plan's
// field paths are indexed to file lines so that errors found later (driver checks during
// expansion) can be reported against the file as well (AnnotateErrors).
package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/plan"
)

// Formats Load recognises.
const (
	FormatCnperf       = "cnperf"
	FormatK8sNetperfV1 = "k8s-netperf-v1"
	FormatK8sNetperfV2 = "k8s-netperf-v2"
	FormatTigerBench   = "tiger-bench"
)

// MaxFileBytes is the largest plan file Load reads.
const MaxFileBytes = 4 << 20

// Pos is where a plan field came from in its file.
type Pos struct {
	Line   int
	Column int
	// Field is the field's path as written in the file, e.g. "tests[0].profiles[1]",
	// "TCPStream.profile" (k8s-netperf v1) or "[2].Perf.external" (tiger-bench).
	Field string
}

// LineIndex maps plan field paths ("tests[0].profiles[1]", "defaults.duration") to their
// position in the file. For the compatibility formats the keys are the paths of the plan
// they were converted into and Pos.Field names the original field.
type LineIndex map[string]Pos

// Loaded is a plan read from a file.
type Loaded struct {
	// File is the path the plan was read from, as given.
	File string
	Plan *api.Plan
	// Format is one of the Format* constants.
	Format string
	// Warnings are things in the file that this version reads but does not act on (for
	// example tiger-bench's standing config), each as "file:line: field: message".
	Warnings []string
	Lines    LineIndex
	// TigerBench holds tiger-bench's tests as written, with tiger-bench's own defaults applied,
	// for the features that work from them (standing config, TTFR, DNS, reconfiguration,
	// results.json). Nil for other formats.
	TigerBench []TigerBenchTestConfig
}

// Schedule is how a loaded plan runs.
type Schedule int

const (
	// ScheduleCases runs the plan's cases, one after the other, through the session and runner
	// on the chosen platform.
	ScheduleCases Schedule = iota
	// ScheduleTigerBench runs tiger-bench's tests (standing config, TTFR, DNS, Calico
	// reconfiguration around cnperf's cases, internal/tigerbench); they need a Kubernetes
	// cluster.
	ScheduleTigerBench
)

// NeedsCluster reports whether the schedule runs only on a Kubernetes cluster.
func (s Schedule) NeedsCluster() bool { return s == ScheduleTigerBench }

// Schedule says how the plan runs, from the file's format: the one place a format picks a
// schedule. A nil Loaded (a plan from flags) runs its cases.
func (l *Loaded) Schedule() Schedule {
	if l != nil && l.Format == FormatTigerBench {
		return ScheduleTigerBench
	}
	return ScheduleCases
}

// FileError is one problem in a file.
type FileError struct {
	File    string
	Line    int // 0 when unknown
	Column  int
	Field   string // field path as written in the file; "" for the whole file
	Message string
}

func (e FileError) String() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Message)
	return b.String()
}

// FileErrors is every problem found in a file, one per line of its message. It wraps the
// *plan.FieldErrors it was made from, if any.
type FileErrors struct {
	Errors []FileError
	cause  error
}

func (e *FileErrors) Error() string {
	lines := make([]string, len(e.Errors))
	for i, fe := range e.Errors {
		lines[i] = fe.String()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns the *plan.FieldErrors the errors were made from, or nil.
func (e *FileErrors) Unwrap() error { return e.cause }

// Load reads a plan file in any supported format. Problems with the file's structure, types
// and values are returned all at once as a *FileErrors; driver capabilities are checked later,
// by Loaded.Expand or plan.ExpandWith followed by AnnotateErrors.
func Load(path string) (*Loaded, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading plan: %w", err)
	}
	defer f.Close()
	return LoadReader(path, f)
}

// LoadReader is Load for a plan read from r (`cnperf run -c -`: standard input); name is used
// in messages.
func LoadReader(name string, r io.Reader) (*Loaded, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading plan %s: %w", name, err)
	}
	if len(data) > MaxFileBytes {
		return nil, &FileErrors{Errors: []FileError{{File: name, Message: fmt.Sprintf("file is larger than %d bytes", MaxFileBytes)}}}
	}
	return LoadBytes(name, data)
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// LoadBytes is Load for data already read; name is used in messages.
func LoadBytes(name string, data []byte) (*Loaded, error) { return loadBytes(name, data, "") }

// loadBytes is LoadBytes; a non-empty format skips detection (the fuzz tests use it to reach
// each format's reader with any input).
func loadBytes(name string, data []byte, format string) (l *Loaded, err error) {
	fail := func(line int, field, format string, a ...any) (*Loaded, error) {
		return nil, &FileErrors{Errors: []FileError{{File: name, Line: line, Field: field, Message: fmt.Sprintf(format, a...)}}}
	}
	root, err := parseYAML(data)
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		line := 0
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			line, _ = strconv.Atoi(m[1])
			msg = m[2]
		}
		return fail(line, "", "YAML syntax error: %s", msg)
	}
	if root == nil {
		return fail(0, "", "file is empty: expected a plan")
	}
	if format == "" {
		var ferr *FileError
		if format, ferr = detect(root); ferr != nil {
			return nil, &FileErrors{Errors: []FileError{{File: name, Line: ferr.Line, Column: ferr.Column, Field: ferr.Field, Message: ferr.Message}}}
		}
	}
	l = &Loaded{File: name, Format: format, Lines: LineIndex{}}
	d := newDecoder()
	switch format {
	case FormatCnperf:
		l.Plan = readCnperf(d, root)
		l.Lines = d.lines
	case FormatK8sNetperfV1, FormatK8sNetperfV2:
		l.Plan = readK8sNetperf(d, root, format, l.Lines)
	case FormatTigerBench:
		l.Plan, l.TigerBench = readTigerBench(d, root, l.Lines)
	}
	if format != FormatCnperf {
		// Also index the original fields, by their paths in the file.
		for k, pos := range d.lines {
			if _, taken := l.Lines[k]; !taken {
				l.Lines[k] = pos
			}
		}
	}
	// Warnings in file order.
	slices.SortStableFunc(d.warns, byPosition)
	for _, w := range d.warns {
		w.File = name
		l.Warnings = append(l.Warnings, w.String())
	}
	if len(d.errs) > 0 {
		slices.SortStableFunc(d.errs, byPosition)
		out := &FileErrors{}
		for _, e := range d.errs {
			e.File = name
			out.Errors = append(out.Errors, e)
		}
		return nil, out
	}
	// Values (durations, sizes, names, ranges) are checked now; what needs the driver registry
	// or the command line (the shortest sample, --allow-short-samples)
	// is checked at expansion.
	// A tiger-bench file may hold only tests without cases (ttfr, dnsperf, standing config).
	if format == FormatTigerBench && len(l.Plan.Tests) == 0 {
		return l, nil
	}
	if err := plan.Validate(l.Plan, plan.Options{DefaultPaths: []api.Path{""}, AllowShortSamples: true}, nil); err != nil {
		return nil, AnnotateErrors(l, err)
	}
	return l, nil
}

// parseYAML parses exactly one YAML document; it returns nil for an empty file. It never
// panics: a panic in the parser on hostile input is turned into an error.
func parseYAML(data []byte) (root *yaml.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			root, err = nil, fmt.Errorf("yaml: cannot parse: %v", r)
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, err
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		line := extra.Line
		if len(extra.Content) > 0 {
			line = extra.Content[0].Line
		}
		return nil, fmt.Errorf("yaml: line %d: a second YAML document (---); a plan file holds one", line)
	case !errors.Is(err, io.EOF):
		return nil, err
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	return doc.Content[0], nil
}

func readCnperf(d *decoder, root *yaml.Node) *api.Plan {
	var p api.Plan
	d.decodeInto(root, &p, "")
	if p.APIVersion == "" {
		d.errorf(root, "apiVersion", "missing apiVersion (want %q)", api.APIVersion)
	}
	if p.Kind == "" {
		d.errorf(root, "kind", "missing kind (want %q)", api.KindPlan)
	}
	return &p
}

// Locate returns "file:line" for a plan field path, using the nearest enclosing field the
// file has ("tests[0].drivers" falls back to "tests[0]"), or the file name alone.
func (l *Loaded) Locate(fieldPath string) string {
	if pos, ok := l.find(fieldPath); ok && pos.Line > 0 {
		return fmt.Sprintf("%s:%d", l.File, pos.Line)
	}
	return l.File
}

func (l *Loaded) find(fieldPath string) (Pos, bool) {
	p := fieldPath
	for {
		if pos, ok := l.Lines[p]; ok {
			return pos, true
		}
		if p == "" {
			return Pos{}, false
		}
		p = parent(p)
	}
}

// parent drops the last element of a field path: "a.b[1]" → "a.b" → "a" → "".
func parent(p string) string {
	if strings.HasSuffix(p, "]") {
		if i := strings.LastIndexByte(p, '['); i >= 0 {
			return p[:i]
		}
	}
	if i := strings.LastIndexByte(p, '.'); i >= 0 {
		return p[:i]
	}
	return ""
}

// AnnotateErrors turns a *plan.FieldErrors about l.Plan into a *FileErrors whose messages
// carry the file, the line and the field as written in the file:
//
//	plan.yaml:12: tests[0].profiles[1]: driver "iperf3" cannot run profile TCP_RR (drivers that can: native, netperf)
//
// Other errors are returned unchanged.
func AnnotateErrors(l *Loaded, err error) error {
	var fe *plan.FieldErrors
	if l == nil || !errors.As(err, &fe) {
		return err
	}
	out := &FileErrors{cause: fe}
	for _, e := range fe.Errors {
		item := FileError{File: l.File, Field: e.Path, Message: e.Message}
		if pos, ok := l.find(e.Path); ok {
			item.Line, item.Column = pos.Line, pos.Column
			if l.Format != FormatCnperf {
				// The plan's path means nothing in the original file: name the original field.
				item.Field = pos.Field
			}
		} else if l.Format != FormatCnperf {
			item.Field = ""
		}
		out.Errors = append(out.Errors, item)
	}
	// File order reads best; problems of the whole file (no line) come first.
	slices.SortStableFunc(out.Errors, byPosition)
	return out
}

// byPosition orders problems as they appear in the file.
func byPosition(a, b FileError) int {
	return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
}

// Expand expands the loaded plan (see plan.ExpandWith) and reports problems against the file.
func (l *Loaded) Expand(opts plan.Options, check func(plan.Case) error) ([]plan.Case, error) {
	if l.Format == FormatTigerBench && len(l.Plan.Tests) == 0 {
		return nil, nil // only ttfr, dnsperf or standing-config tests: internal/tigerbench runs them
	}
	if l.Format == FormatK8sNetperfV1 || l.Format == FormatK8sNetperfV2 {
		if len(opts.DefaultDrivers) == 0 {
			// k8s-netperf's driver is netperf unless its command line says --iperf or --uperf.
			opts.DefaultDrivers = []string{K8sNetperfDefaultDriver}
		}
		// k8s-netperf skips a test its driver does not support, with a warning, and goes on
		// (cmd/k8s-netperf executeWorkload: "Test %s is not supported with driver %s.
		// Skipping."); so does cnperf.
		// Its --bridge and --macvlan put the tests that dial the server pod on the attachment; a
		// `service: True` test goes through the Service's ClusterIP on the cluster's own network
		// (executeWorkload picks the ClusterIP first; its Bridge Info stays empty), and so does
		// cnperf's case, instead of refusing the plan.
		opts.NetworkDirectOnly = true
		opts.SkipUnsupported = func(c plan.Case, path string, err error) bool {
			// two lines: the driver's refusal after a file:line prefix was ~190 columns
			l.Warnings = append(l.Warnings, l.warning(path, fmt.Sprintf("skipped, as k8s-netperf skips a test its driver does not support:\n  %v", err)))
			return true
		}
	}
	cases, err := plan.ExpandWith(l.Plan, opts, check)
	if err != nil {
		return nil, AnnotateErrors(l, err)
	}
	return cases, nil
}

// K8sNetperfDefaultDriver is the driver of a k8s-netperf file's tests when neither the file
// (it cannot) nor --driver names one: k8s-netperf's own default (--netperf=true).
const K8sNetperfDefaultDriver = "netperf"

// warning renders a message about a plan field as "file:line: field: message", naming the
// field as the file writes it.
func (l *Loaded) warning(fieldPath, msg string) string {
	w := FileError{File: l.File, Field: fieldPath, Message: msg}
	if pos, ok := l.find(fieldPath); ok {
		w.Line, w.Column = pos.Line, pos.Column
		if l.Format != FormatCnperf {
			w.Field = pos.Field
		}
	}
	return w.String()
}
