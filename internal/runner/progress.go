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
type TextProgress struct {
	W        io.Writer
	Terminal bool
	start    time.Time
	mu       sync.Mutex
	caseN    int
	caseI    int
	label    string
	eta      time.Duration
	samples  int
	total    string
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
	fmt.Fprintf(p.W, "case %d/%d: %s (elapsed %s, ETA %s)\n", i+1, n, c, round(time.Since(p.start)), round(eta))
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
		fmt.Fprintln(p.W, failedLine("  ", fmt.Sprintf("sample %d failed: ", s.Index+1), s.Error))
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
		fmt.Fprintln(p.W, failedLine("", fmt.Sprintf("case %d/%d failed: ", i+1, n), r.Error))
	}
	if c := r.Confidence; c != nil {
		fmt.Fprintf(p.W, "case %d/%d: %s\n", i+1, n, ConfidenceText(c))
	}
}

// failedLine is a failure as the progress says it, wrapped to the width a person reads (a
// refused server's usage text made one line of ~810 columns; a fault's diagnosis comes last, so
// nothing is cut): indent starts its first line, indent and four spaces the others.
func failedLine(indent, what, why string) string {
	return strings.Join(text.Wrap(what+why, text.DefaultWidth, indent, indent+"    "), "\n")
}

func (p *TextProgress) line() {
	fmt.Fprintf(p.W, "\r\033[Kcase %d/%d  %s  sample %d/%s  elapsed %s  ETA %s",
		p.caseI+1, p.caseN, p.label, p.samples, p.total, round(time.Since(p.start)), round(p.eta))
}

func round(d time.Duration) time.Duration { return d.Round(time.Second) }
