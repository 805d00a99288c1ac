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
	// whole.
	MaxDocumentBytes = 256 << 20
)

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
		return nil, fmt.Errorf("%s: a JSON document larger than %d MiB: this is not a cnperf run (cnperf reads JSON Lines results files of any size)", name, max>>20)
	}
	return data, nil
}
