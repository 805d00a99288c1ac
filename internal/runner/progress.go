package runner

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/text"
)

// TextProgress writes progress to stderr: a live line on a terminal, plain lines otherwise.
// Every line fits Width: a plain line is wrapped (text.WrapLines, continuations indented two
// spaces), the live line is cut ("…"; one wider than the terminal would wrap, and "\r" would
// then rewrite only its last part).
type TextProgress struct {
	W        io.Writer
	Terminal bool
	// Width is the width of the lines in columns (iostreams.MessageWidth of W); 0:
	// text.DefaultWidth.
	Width   int
	start   time.Time
	mu      sync.Mutex
	caseN   int
	caseI   int
	label   string
	eta     time.Duration
	samples int
	total   string
}

// CaseStarted implements Progress.
func (p *TextProgress) CaseStarted(i, n int, c plan.Case, eta time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.start.IsZero() {
		p.start = time.Now()
	}
	p.caseI, p.caseN, p.label, p.eta, p.samples = i, n, c.String(), eta, 0
	p.total = strconv.Itoa(c.Params.Samples)
	if lim := SampleLimit(c); lim > c.Params.Samples {
		p.total = fmt.Sprintf("%d–%d", c.Params.Samples, lim)
	}
	if p.Terminal {
		p.line()
		return
	}
	p.say("case %d/%d: %s (elapsed %s, ETA %s)", i+1, n, c, round(time.Since(p.start)), round(eta))
}

// width is the width of the progress's lines (Width, else text.DefaultWidth).
func (p *TextProgress) width() int {
	if p.Width > 0 {
		return p.Width
	}
	return text.DefaultWidth
}

// say writes a plain line, wrapped to the width.
func (p *TextProgress) say(format string, a ...any) {
	fmt.Fprintln(p.W, text.WrapLines(fmt.Sprintf(format, a...), p.width(), "  "))
}

// SampleDone implements Progress.
func (p *TextProgress) SampleDone(_ plan.Case, s api.Sample) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.samples++
	if p.Terminal {
		p.line()
	}
	if s.Error != "" {
		if p.Terminal {
			fmt.Fprint(p.W, "\r\033[K")
		}
		fmt.Fprintln(p.W, failedLine(p.width(), "  ", fmt.Sprintf("sample %d failed: ", s.Index+1), s.Error))
	}
}

// CaseDone implements Progress.
func (p *TextProgress) CaseDone(i, n int, r api.Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.Terminal {
		fmt.Fprint(p.W, "\r\033[K")
		if i == n-1 {
			fmt.Fprintf(p.W, "%d cases in %s\n", n, round(time.Since(p.start)))
		}
	}
	if r.Error != "" {
		fmt.Fprintln(p.W, failedLine(p.width(), "", fmt.Sprintf("case %d/%d failed: ", i+1, n), r.Error))
	}
	if c := r.Confidence; c != nil {
		p.say("case %d/%d: %s", i+1, n, ConfidenceText(c))
	}
}

// failedLine is a failure as the progress says it, wrapped to width (a refused server's usage
// text made one line of ~810 columns; a fault's diagnosis comes last, so nothing is cut):
// indent starts its first line, indent and four spaces the others.
func failedLine(width int, indent, what, why string) string {
	return strings.Join(text.Wrap(what+why, width, indent, indent+"    "), "\n")
}

// line rewrites the live line, cut to the width: the case's label gives way (text.OneLine:
// "…" where it was cut; the counters and times, some 50 columns, always fit text.MinWidth).
func (p *TextProgress) line() {
	label := p.label
	rest := fmt.Sprintf("  sample %d/%s  elapsed %s  ETA %s", p.samples, p.total, round(time.Since(p.start)), round(p.eta))
	head := fmt.Sprintf("case %d/%d  ", p.caseI+1, p.caseN)
	if room := p.width() - text.Width(head) - text.Width(rest); text.Width(label) > room {
		label = text.OneLine(label, max(room, 1))
	}
	fmt.Fprint(p.W, "\r\033[K"+head+label+rest)
}

func round(d time.Duration) time.Duration { return d.Round(time.Second) }
