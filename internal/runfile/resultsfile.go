// Package runfile is a run on disk: the results file (JSON Lines, appended and fsynced as each
// case ends) and its writer, and the readers of everything cnperf reads back — results files,
// the JSON of -o json and the CSV of -o csv (written here too, since its columns are what the
// reader parses) — which refuse hostile input and recompute summaries that contradict their
// samples.
package runfile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// The results file is JSON Lines, appended to and fsynced as each case ends, so a run that is
// interrupted (SIGINT, a kill, a crash) leaves a valid file with every finished case:
//
//	{"type":"run","run":{...the Run, with "results":[]...}}
//	{"type":"result","uuid":"<run uuid>","result":{...one Result...}}    (one per finished case)
//	{"type":"end","uuid":"<run uuid>","endTime":"...","interrupted":false,"timing":{...}}
//
// A run's metadata learnt after it started (cluster details) is written with
//
//	{"type":"update","uuid":"<run uuid>","run":{...the Run, with "results":[]...}}
//
// which replaces the run's metadata read so far and keeps its results; the end record also
// carries "cluster" and "notes" when the run has them.
//
// A file may hold several runs one after the other (Create appends). A run without
// an "end" line was interrupted (or is still running). Readers skip a truncated last line — the
// line a writer killed mid-write leaves — with a warning.

// Results-file record types.
const (
	RecordRun    = "run"
	RecordResult = "result"
	RecordEnd    = "end"
	RecordUpdate = "update"
)

type runRecord struct {
	Type string   `json:"type"`
	Run  *api.Run `json:"run"`
}

type resultRecord struct {
	Type   string      `json:"type"`
	UUID   string      `json:"uuid"`
	Result *api.Result `json:"result"`
}

type updateRecord struct {
	Type string   `json:"type"`
	UUID string   `json:"uuid"`
	Run  *api.Run `json:"run"`
}

type endRecord struct {
	Type        string              `json:"type"`
	UUID        string              `json:"uuid"`
	EndTime     time.Time           `json:"endTime"`
	Interrupted bool                `json:"interrupted"`
	Timing      *api.Timing         `json:"timing,omitempty"`
	Cluster     *api.ClusterDetails `json:"cluster,omitempty"`
	Notes       []string            `json:"notes,omitempty"`
}

// anyRecord reads any line: an end record's fields, and a run or a result.
type anyRecord struct {
	endRecord
	Run    *api.Run    `json:"run"`
	Result *api.Result `json:"result"`
}

// Writer appends one run to a results file. It is safe for concurrent use.
type Writer struct {
	mu     sync.Mutex
	f      *os.File
	path   string
	uuid   string
	closed bool
}

// Create opens path for appending (creating it if needed) and writes the run's
// header line (the run without results). An existing file must be a cnperf results file: its
// runs are kept and this run is appended after them; a partial last line left by a writer
// that was killed mid-write is cut off first. The run needs a UUID.
func Create(path string, run *api.Run) (*Writer, error) {
	if run == nil || run.UUID == "" {
		return nil, fmt.Errorf("results file %s: the run has no uuid", path)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("results file: %w", err)
	}
	if err := prepareAppend(f, path); err != nil {
		f.Close()
		return nil, err
	}
	w := &Writer{f: f, path: path, uuid: run.UUID}
	if err := w.writeLine(runRecord{Type: RecordRun, Run: header(run)}); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// header is the run without its results, with apiVersion and kind filled in.
func header(run *api.Run) *api.Run {
	hdr := *run
	hdr.Results = []api.Result{}
	if hdr.APIVersion == "" {
		hdr.APIVersion = api.APIVersion
	}
	if hdr.Kind == "" {
		hdr.Kind = api.KindRun
	}
	return &hdr
}

// UpdateRun records run metadata learnt after the run started (e.g. the cluster details):
// readers replace the run's metadata with run's (its results are ignored here) and keep the
// results appended so far. Its UUID must be the writer's.
func (w *Writer) UpdateRun(run api.Run) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return fmt.Errorf("results file %s: update after close", w.path)
	}
	if run.UUID != w.uuid {
		return fmt.Errorf("results file %s: update for run %q, the file's run is %s", w.path, run.UUID, w.uuid)
	}
	return w.writeLine(updateRecord{Type: RecordUpdate, UUID: w.uuid, Run: header(&run)})
}

// prepareAppend checks that a non-empty file is a results file and cuts a partial last line.
func prepareAppend(f *os.File, path string) error {
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("results file %s: %w", path, err)
	}
	size := st.Size()
	if size == 0 {
		return nil
	}
	first, err := readLine(bufio.NewReader(io.NewSectionReader(f, 0, size)), MaxLineBytes)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, errLineTooLong) {
		return fmt.Errorf("results file %s: %w", path, err)
	}
	var rec anyRecord
	if err := json.Unmarshal(first, &rec); err != nil || rec.Type != RecordRun {
		return fmt.Errorf("results file %s exists and is not a cnperf results file (JSON Lines starting with a run record); choose another path or remove it", path)
	}
	// Cut a partial last line: find the last newline, reading backwards a block at a time.
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, size-1); err != nil {
		return fmt.Errorf("results file %s: %w", path, err)
	}
	if last[0] == '\n' {
		return nil
	}
	cut := int64(0)
	buf := make([]byte, 64<<10)
	for end := size; end > 0 && cut == 0; {
		start := max(end-int64(len(buf)), 0)
		b := buf[:end-start]
		if _, err := f.ReadAt(b, start); err != nil {
			return fmt.Errorf("results file %s: %w", path, err)
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			cut = start + int64(i) + 1
		}
		end = start
	}
	if err := f.Truncate(cut); err != nil {
		return fmt.Errorf("results file %s: cutting a partial last line: %w", path, err)
	}
	return nil
}

// Path is the file's path.
func (w *Writer) Path() string { return w.path }

func (w *Writer) writeLine(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("results file %s: encode: %w", w.path, err)
	}
	b = append(b, '\n')
	// One write per line: with O_APPEND the line lands whole or, if the process dies in the
	// middle, as a partial last line that readers skip.
	if _, err := w.f.Write(b); err != nil {
		return fmt.Errorf("results file %s: write: %w", w.path, err)
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("results file %s: fsync: %w", w.path, err)
	}
	return nil
}

// AppendResult writes one finished case and fsyncs it.
func (w *Writer) AppendResult(r api.Result) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return fmt.Errorf("results file %s: append after close", w.path)
	}
	return w.writeLine(resultRecord{Type: RecordResult, UUID: w.uuid, Result: &r})
}

// Close writes the end line from end's EndTime, Interrupted, Timing and Notes (the run's
// complete notes, which replace the header's when read back), fsyncs and closes the file.
// Closing twice is an error.
func (w *Writer) Close(end api.Run) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return fmt.Errorf("results file %s: already closed", w.path)
	}
	w.closed = true
	rec := endRecord{Type: RecordEnd, UUID: w.uuid, EndTime: end.EndTime, Interrupted: end.Interrupted,
		Timing: end.Timing, Cluster: end.Cluster, Notes: end.Notes}
	werr := w.writeLine(rec)
	cerr := w.f.Close()
	if werr != nil {
		return werr
	}
	if cerr != nil {
		return fmt.Errorf("results file %s: close: %w", w.path, cerr)
	}
	return nil
}

// Read reads the runs in a results file (JSON Lines), a JSON document printed by
// `cnperf run -o json` (one run or an array of runs, or several documents one after the
// other) or a CSV written by `-o csv` (summaries only). Warnings — a truncated last line, a run
// without an end record — are added to the affected run's Notes; ReadWarnings also
// returns them for logging.
func Read(path string) ([]*api.Run, error) {
	runs, _, err := ReadWarnings(path)
	return runs, err
}

// ReadWarnings is Read that also returns the warnings.
func ReadWarnings(path string) ([]*api.Run, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	return ReadRuns(f, path)
}

// ReadPathWithin reads the runs of one path as ReadWarnings does ("-" reads stdin instead),
// charging what it reads to b, the budget of a command that reads several files.
func ReadPathWithin(path string, stdin io.Reader, b *Budget) ([]*api.Run, []string, error) {
	if path == "-" {
		return readRuns(stdin, "-", b)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	return readRuns(f, path, b)
}

// ReadRuns reads runs from r; name is used in messages (a file name, or "-" for stdin). It
// streams: a JSON Lines file is read one line at a time, each line at most MaxLineBytes; a
// JSON document is read whole up to MaxDocumentBytes; in all at most MaxReadBytes (the runs
// are held in memory). Every result is checked (checkResult): negative, non-finite or
// physically impossible figures are refused with file:line, and a summary that contradicts
// its samples is recomputed from them with a warning.
func ReadRuns(r io.Reader, name string) ([]*api.Run, []string, error) {
	return readRuns(r, name, NewBudget(MaxReadBytes))
}

func readRuns(r io.Reader, name string, budget *Budget) ([]*api.Run, []string, error) {
	br := bufio.NewReaderSize(&budgetReader{r: r, b: budget}, 64<<10)
	// Skip leading white space and a byte-order mark, a bounded amount of them.
	skipped := 0
	for {
		b, err := br.Peek(1)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, nil, fmt.Errorf("%s: empty file: no runs", name)
			}
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		if bytes.HasPrefix(b, []byte{0xef}) {
			if bom, _ := br.Peek(3); bytes.Equal(bom, []byte("\ufeff")) {
				_, _ = br.Discard(3) // peeked: buffered, cannot fail
				continue
			}
		}
		if !strings.ContainsRune(" \t\r\n", rune(b[0])) {
			break
		}
		if skipped++; skipped > MaxLineBytes {
			return nil, nil, fmt.Errorf("%s: more than %d MiB of white space and no data: not a cnperf results file", name, MaxLineBytes>>20)
		}
		_, _ = br.Discard(1) // peeked: buffered, cannot fail
	}
	head, _ := br.Peek(len("run.uuid,"))
	switch {
	case bytes.Equal(head, []byte("run.uuid,")):
		runs, err := ReadCSV(newLineLimiter(br, name, MaxLineBytes), name)
		return runs, nil, err
	case head[0] == '{':
		first, err := readLine(br, MaxLineBytes)
		if errors.Is(err, errLineTooLong) {
			return nil, nil, lineTooLong(name, 1)
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		if isJSONLines(first) {
			return readJSONLines(first, br, name)
		}
		data, err := readAllBounded(io.MultiReader(bytes.NewReader(first), br), name, MaxDocumentBytes)
		if err != nil {
			return nil, nil, err
		}
		return readJSONDocs(data, name)
	case head[0] == '[':
		data, err := readAllBounded(br, name, MaxDocumentBytes)
		if err != nil {
			return nil, nil, err
		}
		return readJSONDocs(data, name)
	}
	return nil, nil, fmt.Errorf("%s: not a cnperf results file (JSON Lines), run JSON or CSV", name)
}

// isJSONLines reports whether the first line is a whole JSON object with a record type.
func isJSONLines(first []byte) bool {
	var probe struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(first, &probe) != nil {
		return false
	}
	switch probe.Type {
	case RecordRun, RecordResult, RecordEnd, RecordUpdate:
		return true
	}
	return false
}

func checkRunHeader(run *api.Run) error {
	if run.APIVersion != api.APIVersion {
		return fmt.Errorf("apiVersion %q is not supported (this cnperf reads %s)", run.APIVersion, api.APIVersion)
	}
	if run.Kind != api.KindRun {
		return fmt.Errorf("kind %q is not %s", run.Kind, api.KindRun)
	}
	return nil
}

// jsonLines is a JSON Lines results file as it is read: the runs so far, the current run and
// whether its end record came, the uuids seen and the warnings.
type jsonLines struct {
	name     string
	runs     []*api.Run
	warnings []string
	cur      *api.Run
	ended    bool
	uuids    map[string]bool
}

// readJSONLines reads a JSON Lines results file whose first line, first, was read already.
func readJSONLines(first []byte, br *bufio.Reader, name string) ([]*api.Run, []string, error) {
	j := &jsonLines{name: name, uuids: map[string]bool{}}
	line, lineErr := first, error(nil)
	for lineNo := 1; ; lineNo++ {
		if lineNo > 1 {
			line, lineErr = readLine(br, MaxLineBytes)
			if errors.Is(lineErr, errLineTooLong) {
				return nil, j.warnings, lineTooLong(name, lineNo)
			}
			if lineErr != nil && !errors.Is(lineErr, io.EOF) {
				return nil, j.warnings, fmt.Errorf("%s:%d: %w", name, lineNo, lineErr)
			}
			if len(line) == 0 && lineErr != nil {
				break
			}
		}
		// A line that ends the stream without its newline is the one a killed writer leaves.
		last := len(line) == 0 || line[len(line)-1] != '\n'
		if len(bytes.TrimSpace(line)) == 0 {
			if lineErr != nil {
				break
			}
			continue
		}
		var rec anyRecord
		if err := json.Unmarshal(line, &rec); err != nil {
			if last {
				j.warn(j.cur, fmt.Sprintf("line %d: truncated last line skipped (the writer stopped mid-line): %v", lineNo, err))
				continue
			}
			return nil, j.warnings, fmt.Errorf("%s:%d: corrupt line: %w", name, lineNo, err)
		}
		if err := j.add(&rec, lineNo); err != nil {
			return nil, j.warnings, fmt.Errorf("%s:%d: %w", name, lineNo, err)
		}
	}
	j.finish()
	if len(j.runs) == 0 {
		return nil, j.warnings, fmt.Errorf("%s: no run record", name)
	}
	return j.runs, j.warnings, nil
}

// warn keeps a warning for the reader and, when there is a run, in the run's notes.
func (j *jsonLines) warn(run *api.Run, msg string) {
	j.warnings = append(j.warnings, j.name+": "+msg)
	if run != nil {
		run.Notes = append(run.Notes, msg)
	}
}

// finish marks the current run interrupted when its end record did not come.
func (j *jsonLines) finish() {
	cur := j.cur
	if cur == nil || j.ended {
		return
	}
	cur.Interrupted = true
	if cur.EndTime.IsZero() && len(cur.Results) > 0 {
		cur.EndTime = cur.Results[len(cur.Results)-1].EndTime
	}
	j.warn(cur, fmt.Sprintf("run %s has no end record: it was interrupted or is still running (%d finished cases)", cur.UUID, len(cur.Results)))
}

// add reads one record of line lineNo.
func (j *jsonLines) add(rec *anyRecord, lineNo int) error {
	switch rec.Type {
	case RecordRun:
		return j.startRun(rec)
	case RecordResult:
		return j.addResult(rec, lineNo)
	case RecordEnd:
		return j.end(rec)
	case RecordUpdate:
		return j.update(rec)
	}
	return fmt.Errorf("unknown record type %q", rec.Type)
}

// startRun ends the current run and starts the run of a run record.
func (j *jsonLines) startRun(rec *anyRecord) error {
	if rec.Run == nil {
		return errors.New(`run record without "run"`)
	}
	if err := checkRunHeader(rec.Run); err != nil {
		return err
	}
	if rec.Run.UUID == "" {
		return errors.New("run without uuid")
	}
	if j.uuids[rec.Run.UUID] {
		return fmt.Errorf("run %s appears twice", rec.Run.UUID)
	}
	j.finish()
	j.uuids[rec.Run.UUID] = true
	j.cur, j.ended = rec.Run, false
	if j.cur.Results == nil {
		j.cur.Results = []api.Result{}
	}
	j.runs = append(j.runs, j.cur)
	return nil
}

// addResult adds a result record's result to the current run, checked (checkResult).
func (j *jsonLines) addResult(rec *anyRecord, lineNo int) error {
	cur := j.cur
	switch {
	case cur == nil:
		return errors.New("result before any run record")
	case rec.UUID != cur.UUID:
		return fmt.Errorf("result for run %q inside run %s", rec.UUID, cur.UUID)
	case j.ended:
		return fmt.Errorf("result after the end of run %s", cur.UUID)
	case rec.Result == nil:
		return errors.New(`result record without "result"`)
	}
	w, err := checkResult(rec.Result)
	if err != nil {
		return err
	}
	if w != "" {
		j.warn(cur, fmt.Sprintf("line %d: %s", lineNo, w))
	}
	cur.Results = append(cur.Results, *rec.Result)
	return nil
}

// end ends the current run with what its end record says.
func (j *jsonLines) end(rec *anyRecord) error {
	cur := j.cur
	if cur == nil || rec.UUID != cur.UUID {
		return fmt.Errorf("end of run %q which is not the current run", rec.UUID)
	}
	if j.ended {
		return fmt.Errorf("second end record for run %s", cur.UUID)
	}
	j.ended = true
	cur.EndTime = rec.EndTime
	cur.Interrupted = rec.Interrupted
	if rec.Timing != nil {
		cur.Timing = rec.Timing
	}
	if rec.Notes != nil {
		cur.Notes = rec.Notes // the run's notes at its end, a superset of the header's
	}
	if rec.Cluster != nil {
		cur.Cluster = rec.Cluster
	}
	return nil
}

// update replaces the current, unfinished run's header with an update record's, keeping its
// results.
func (j *jsonLines) update(rec *anyRecord) error {
	cur := j.cur
	if cur == nil || rec.UUID != cur.UUID || j.ended {
		return fmt.Errorf("update of run %q which is not the current, unfinished run", rec.UUID)
	}
	if rec.Run == nil || rec.Run.UUID != cur.UUID {
		return fmt.Errorf("update record without the run %s", cur.UUID)
	}
	if err := checkRunHeader(rec.Run); err != nil {
		return err
	}
	results := cur.Results
	*cur = *rec.Run
	cur.Results = results
	return nil
}

// readJSONDocs reads one or more JSON values, each a Run or an array of Runs.
func readJSONDocs(data []byte, name string) ([]*api.Run, []string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var runs []*api.Run
	var warnings []string
	for {
		start := dec.InputOffset()
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			off := jsonErrOffset(err, dec.InputOffset())
			if errors.Is(err, io.ErrUnexpectedEOF) {
				off = int64(len(data))
			}
			return nil, nil, fmt.Errorf("%s:%d: %w", name, lineAt(data, off), err)
		}
		// Skip whitespace so the line number points at the value itself.
		for start < int64(len(data)) && strings.ContainsRune(" \t\r\n", rune(data[start])) {
			start++
		}
		var batch []*api.Run
		if bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) {
			err = json.Unmarshal(raw, &batch)
		} else {
			var one api.Run
			err = json.Unmarshal(raw, &one)
			batch = []*api.Run{&one}
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s:%d: %w", name, lineAt(data, start+jsonErrOffset(err, 0)), err)
		}
		for _, r := range batch {
			if r == nil {
				return nil, nil, fmt.Errorf("%s:%d: null run", name, lineAt(data, start))
			}
			if err := checkRunHeader(r); err != nil {
				return nil, nil, fmt.Errorf("%s:%d: %w", name, lineAt(data, start), err)
			}
			if r.Results == nil {
				r.Results = []api.Result{}
			}
			for i := range r.Results {
				w, err := checkResult(&r.Results[i])
				if err != nil {
					return nil, nil, fmt.Errorf("%s:%d: run %s, results[%d]: %w", name, lineAt(data, start), r.UUID, i, err)
				}
				if w != "" {
					w = fmt.Sprintf("line %d: results[%d]: %s", lineAt(data, start), i, w)
				}
				warnings = appendWarning(warnings, r, name, w)
			}
		}
		runs = append(runs, batch...)
	}
	if len(runs) == 0 {
		return nil, nil, fmt.Errorf("%s: no runs", name)
	}
	return runs, warnings, nil
}

func jsonErrOffset(err error, def int64) int64 {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return se.Offset
	case errors.As(err, &te):
		return te.Offset
	}
	return def
}

// lineAt is the 1-based line of byte offset off in data.
func lineAt(data []byte, off int64) int {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	if off < 0 {
		off = 0
	}
	return bytes.Count(data[:off], []byte("\n")) + 1
}
