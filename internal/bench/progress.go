//go:build linux

package bench

import (
	"fmt"
	"io"
	"time"

	"vigil/internal/wire"
)

// Progress reports a run as it goes: on a terminal one line rewritten in
// place (done/total, ETA, current cell and arm, discards so far); otherwise
// one plain log line per sample.
type Progress struct {
	w        io.Writer
	tty      bool
	total    int // slots scheduled in this invocation
	done     int // slots with their first sample of this invocation taken
	reruns   int // further samples of a slot just taken (re-measures)
	last     slot
	discards int // invalid samples so far (warm-ups are not discards)
	start    time.Time
	lineOpen bool
}

// NewProgress starts reporting on w.
func NewProgress(w io.Writer, tty bool, total int) *Progress {
	return &Progress{w: w, tty: tty, total: total, start: time.Now()}
}

func (p *Progress) eta() string {
	if p.done == 0 {
		return "?"
	}
	per := time.Since(p.start) / time.Duration(p.done+p.reruns)
	return (per * time.Duration(p.total-p.done)).Round(time.Second).String()
}

// Begin announces the sample about to run.
func (p *Progress) Begin(cell, arm string, block int, attempt int) {
	if !p.tty {
		return
	}
	what := fmt.Sprintf("block %d", block)
	if block < 0 {
		what = fmt.Sprintf("warm-up %d", -block)
	}
	if attempt > 0 {
		what += fmt.Sprintf(" re-measure %d", attempt)
	}
	fmt.Fprintf(p.w, "\r\x1b[K[%d/%d] ETA %s  %s %s %s  discards %d", p.done, p.total, p.eta(), cell, arm, what, p.discards)
	p.lineOpen = true
}

// End records a finished sample. A re-measure follows its slot's previous
// sample at once, so a sample of the slot that ended last is a re-measure;
// any other finishes a scheduled slot, whatever its attempt number (a
// resumed slot's first sample here can be attempt 1 or more).
func (p *Progress) End(s wire.Sample) {
	k := slot{s.Cell, s.Block, s.Arm}
	if p.done+p.reruns > 0 && k == p.last {
		p.reruns++
	} else {
		p.done++
	}
	p.last = k
	if !s.Valid {
		p.discards++
	}
	if p.tty {
		if !s.Valid {
			p.Logf("discarded %s: %s", s.ID, s.InvalidReason)
		}
		return
	}
	state := "valid"
	if !s.Valid {
		state = "INVALID: " + s.InvalidReason
	} else if s.Warmup {
		state = "warm-up"
	}
	fmt.Fprintf(p.w, "vigil bench: [%d/%d] %s wall %s peak %s: %s\n", p.done, p.total, s.ID,
		time.Duration(s.WallNS).Round(time.Millisecond), bytesText(s.TreePeakBytes), state)
}

// Skip drops a scheduled slot that will not run (its re-measure budget
// was spent before a resume), so that done can still reach total.
func (p *Progress) Skip() {
	if p.total > p.done {
		p.total--
	}
}

// Logf prints a line that stays (above the progress line on a terminal).
func (p *Progress) Logf(format string, args ...any) {
	if p.tty && p.lineOpen {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.lineOpen = false
	}
	fmt.Fprintf(p.w, "vigil bench: "+format+"\n", args...)
}

// Finish clears the progress line.
func (p *Progress) Finish() {
	if p.tty && p.lineOpen {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.lineOpen = false
	}
}

func bytesText(n int64) string {
	if n < 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1fMiB", float64(n)/(1<<20))
}
