package observe

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// throttleKeysMax bounds the distinct messages a Throttle remembers; past
// it the table starts over (a flood of distinct messages is let through).
const throttleKeysMax = 1024

// ThrottleOptions shape a Throttle.
type ThrottleOptions struct {
	// Every is the quiet period: a warning or error whose level and message
	// were already logged within it is counted, not written. Default 10s.
	Every time.Duration
	// Level is the lowest level throttled; default slog.LevelWarn (info
	// lines are not repeated per record, so they are never held back).
	Level slog.Level
	// Now is the clock; default time.Now. Tests drive a fake one.
	Now func() time.Time
}

// Throttle wraps next so that a run of identical warnings or errors (same
// level and message: a disk failing every fsync, a client reconnecting in
// a loop) writes its first line, then at most one line per Every, that one
// carrying "suppressed": how many were held back since. Records below
// opts.Level pass untouched. Safe for concurrent use; the handlers
// WithAttrs and WithGroup return share the throttle's memory.
func Throttle(next slog.Handler, opts ThrottleOptions) slog.Handler {
	if opts.Every <= 0 {
		opts.Every = 10 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Level == 0 {
		opts.Level = slog.LevelWarn
	}
	return &throttle{next: next, opts: opts, state: &throttleState{seen: map[throttleKey]*throttleEntry{}}}
}

type throttleKey struct {
	level slog.Level
	msg   string
}

type throttleEntry struct {
	last       time.Time // when a line was last written
	suppressed int64     // held back since
}

type throttleState struct {
	mu   sync.Mutex
	seen map[throttleKey]*throttleEntry
}

type throttle struct {
	next  slog.Handler
	opts  ThrottleOptions
	state *throttleState
}

func (t *throttle) Enabled(ctx context.Context, l slog.Level) bool { return t.next.Enabled(ctx, l) }

func (t *throttle) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < t.opts.Level {
		return t.next.Handle(ctx, r)
	}
	write, suppressed := t.state.admit(throttleKey{r.Level, r.Message}, t.opts.Now(), t.opts.Every)
	if !write {
		return nil
	}
	if suppressed > 0 {
		r = r.Clone()
		r.AddAttrs(slog.Int64("suppressed", suppressed))
	}
	return t.next.Handle(ctx, r)
}

// admit decides whether a record with key is written now, and how many
// like it were held back since the last one written.
func (s *throttleState) admit(k throttleKey, now time.Time, every time.Duration) (write bool, suppressed int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.seen[k]
	if !ok {
		if len(s.seen) >= throttleKeysMax {
			clear(s.seen)
		}
		s.seen[k] = &throttleEntry{last: now}
		return true, 0
	}
	if now.Sub(e.last) < every {
		e.suppressed++
		return false, 0
	}
	suppressed, e.suppressed, e.last = e.suppressed, 0, now
	return true, suppressed
}

func (t *throttle) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &throttle{next: t.next.WithAttrs(attrs), opts: t.opts, state: t.state}
}

func (t *throttle) WithGroup(name string) slog.Handler {
	return &throttle{next: t.next.WithGroup(name), opts: t.opts, state: t.state}
}
