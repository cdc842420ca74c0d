package bench

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/felixbroker/felix/bench/internal/units"
)

// progressEvery is how often a live progress line is redrawn.
const progressEvery = 250 * time.Millisecond

// Progress keeps one line of a terminal up to date while a measurement runs:
// records so far, the rate since the last redraw, MB/s and the time elapsed.
// A nil *Progress is valid and draws nothing: that is what ProgressFor
// returns when the output is not a terminal or CI is set. Draw and Stop may
// be called from any goroutine.
type Progress struct {
	w      io.Writer
	label  string
	totals Totals
	start  time.Time

	mu          sync.Mutex
	lastAt      time.Time
	lastRecords int64
	stopped     bool
	ticker      *time.Ticker
	done        chan struct{}
}

// ProgressEnabled reports whether a live line belongs on f: f is a
// terminal and the CI environment variable is unset (or "false" or "0").
func ProgressEnabled(f *os.File) bool {
	switch os.Getenv("CI") {
	case "", "false", "0":
	default:
		return false
	}
	return f != nil && isTerminal(f)
}

// ProgressFor starts a line on f redrawn every 250ms, or returns nil when
// ProgressEnabled(f) is false. Call Stop when the measurement ends.
func ProgressFor(f *os.File, label string, t Totals) *Progress {
	if !ProgressEnabled(f) {
		return nil
	}
	p := NewProgress(f, label, t, time.Now())
	p.Start(progressEvery)
	return p
}

// ProgressHook starts a progress line for a measurement and returns the
// function that ends it. Measurements that run inside a library (the disk
// baselines) take one, so the caller decides where the line goes.
type ProgressHook func(label string, t Totals) (stop func())

// ProgressTo returns a hook drawing on f, or nil when ProgressEnabled(f) is
// false.
func ProgressTo(f *os.File) ProgressHook {
	if !ProgressEnabled(f) {
		return nil
	}
	return func(label string, t Totals) func() {
		return ProgressFor(f, label, t).Stop
	}
}

// NewProgress returns a line that draws on w whenever Draw is called, whether
// or not w is a terminal; start is when the measurement began.
func NewProgress(w io.Writer, label string, t Totals, start time.Time) *Progress {
	return &Progress{w: w, label: label, totals: t, start: start, lastAt: start}
}

// Start redraws the line every interval until Stop.
func (p *Progress) Start(every time.Duration) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped || p.ticker != nil {
		return
	}
	p.ticker = time.NewTicker(every)
	p.done = make(chan struct{})
	go p.loop(p.ticker.C, p.done)
}

func (p *Progress) loop(tick <-chan time.Time, done <-chan struct{}) {
	for {
		select {
		case now := <-tick:
			p.Draw(now)
		case <-done:
			return
		}
	}
}

// Draw redraws the line as of now, in place: a carriage return, the line,
// and an erase to the end of the line.
func (p *Progress) Draw(now time.Time) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	_, _ = io.WriteString(p.w, "\r"+p.frame(now)+"\x1b[K")
}

// frame renders the line and remembers the figures for the next rate.
func (p *Progress) frame(now time.Time) string {
	records, bytes := p.totals.Totals()
	elapsed := now.Sub(p.start)
	var rate float64
	if span := now.Sub(p.lastAt).Seconds(); span > 0 {
		rate = float64(records-p.lastRecords) / span
	}
	p.lastAt, p.lastRecords = now, records
	var mb float64
	if secs := elapsed.Seconds(); secs > 0 {
		mb = float64(bytes) / secs / 1e6
	}
	return fmt.Sprintf("%s  %s records  %s records/s  %s MB/s  %s elapsed",
		p.label, units.Count(float64(records)), units.Count(rate), units.MBPerSec(mb),
		units.Duration(elapsed.Round(100*time.Millisecond)))
}

// Stop ends the redraws and erases the line, leaving the cursor at the
// start of an empty line for the table that follows.
func (p *Progress) Stop() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	p.stopped = true
	if p.ticker != nil {
		p.ticker.Stop()
		close(p.done)
	}
	_, _ = io.WriteString(p.w, "\r\x1b[K")
}
