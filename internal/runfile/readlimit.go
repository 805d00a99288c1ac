package runfile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// Bounds on what the results-file readers hold in memory, so that a wrong or hostile path
// (/dev/zero, a file without line breaks, an endless stream on stdin) ends in an error
// instead of exhausting memory. A results-file line is one case with its raw samples: the
// largest real ones are a few hundred kilobytes.
const (
	// MaxLineBytes bounds one line of a JSON Lines results file or of a CSV file.
	MaxLineBytes = 64 << 20
	// MaxDocumentBytes bounds a JSON document (`cnperf run -o json` output), which is read
	// whole and then decoded: about 8 times its size in memory at the peak (measured:
	// docs/reporting.md), so less than MaxReadBytes.
	MaxDocumentBytes = 96 << 20
	// MaxReadBytes bounds what one command (cnperf report, compare) reads over all its files:
	// the runs read are held in memory at about 5 times their size on disk, and a report must
	// stay within 1 GiB (measured: docs/reporting.md, "How much they read").
	MaxReadBytes = 128 << 20
)

// Budget is what the readers may still take in for one command, shared by all the files it
// reads (NewBudget). Past it they stop with an error (tooMuch) before holding more.
type Budget struct {
	max, left int64
}

// NewBudget is a budget of max bytes (MaxReadBytes for a command).
func NewBudget(max int64) *Budget { return &Budget{max: max, left: max} }

// take charges n bytes; false when the budget is exhausted.
func (b *Budget) take(n int) bool {
	b.left -= int64(n)
	return b.left >= 0
}

// tooMuch is the error past a budget of max bytes.
func tooMuch(max int64) error {
	return fmt.Errorf("more than %.4g MiB of runs read in one command, the limit that keeps a report within about 1 GiB of memory: "+
		"report or compare fewer runs at once (a results file holds one JSON line per run, case and end: split it with head, tail or grep)",
		float64(max)/(1<<20))
}

// budgetReader charges what passes through it to a budget.
type budgetReader struct {
	r io.Reader
	b *Budget
}

func (br *budgetReader) Read(p []byte) (int, error) {
	n, err := br.r.Read(p)
	if !br.b.take(n) {
		return 0, tooMuch(br.b.max)
	}
	return n, err
}

// errLineTooLong is returned by readLine past MaxLineBytes.
var errLineTooLong = errors.New("line too long")

func lineTooLong(name string, lineNo int) error {
	return fmt.Errorf("%s:%d: line longer than %d MiB, the limit of a results-file line: this is not a cnperf results file (or it is corrupt)",
		name, lineNo, MaxLineBytes>>20)
}

// readLine returns the next line of br with its '\n' (none at the end of the stream), or
// errLineTooLong once it passes max bytes, having read at most max+bufsize bytes. At the end
// of the stream it returns what is left and io.EOF.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(line)+len(frag) > max {
			return nil, errLineTooLong
		}
		line = append(line, frag...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, err
	}
}

// lineLimiter passes a stream through unchanged but fails once one of its lines passes max
// bytes: it bounds the memory of readers (encoding/csv) that buffer whole lines.
type lineLimiter struct {
	r      io.Reader
	max    int
	cur    int // bytes since the last '\n'
	lineNo int // 1-based line of the next byte
	name   string
	err    error
}

func newLineLimiter(r io.Reader, name string, max int) *lineLimiter {
	return &lineLimiter{r: r, max: max, lineNo: 1, name: name}
}

func (l *lineLimiter) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	n, err := l.r.Read(p)
	for i := 0; i < n; {
		j := bytes.IndexByte(p[i:n], '\n')
		if j < 0 {
			l.cur += n - i
			break
		}
		l.cur += j
		if l.cur > l.max {
			break
		}
		l.cur = 0
		l.lineNo++
		i += j + 1
	}
	if l.cur > l.max {
		l.err = lineTooLong(l.name, l.lineNo)
		return 0, l.err
	}
	return n, err
}

// readAllBounded reads r to its end, failing past max bytes.
func readAllBounded(r io.Reader, name string, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s: a JSON document larger than %d MiB: too large to read whole (a results file, JSON Lines, is read a line at a time)", name, max>>20)
	}
	return data, nil
}
