package shardlog

import (
	"errors"
	"sync/atomic"

	"github.com/felixbroker/felix/segment"
)

// The offline state. Damage found in a record after Open (by the background
// verification of the sealed segments, verify.go, or by a read that gets
// there first) takes the log offline for good: every later Read and Append
// fails with an error matching ErrOffline that carries the
// *segment.CorruptionError naming the file, the byte and the fault. So no
// reader is ever handed the records after the damage without the damaged
// one (a gap), and no append lands in a log that may no longer be whole.
// Appends already queued are still written and acknowledged, and Sync and
// Close still make what was acknowledged durable. Only a reopen, after an
// operator repaired or restored the file, serves the log again.

// ErrOffline matches every Read and Append of a log that found a damaged
// record after it opened.
var ErrOffline = errors.New("felix/shardlog: log offline: a record on disk is damaged")

// offlineError is why a log went offline: errors.Is matches ErrOffline and
// segment.ErrCorrupt, errors.As finds the *segment.CorruptionError.
type offlineError struct {
	damage *segment.CorruptionError
}

func (e *offlineError) Error() string {
	return "felix/shardlog: log offline: " + e.damage.Error()
}

func (e *offlineError) Unwrap() []error { return []error{ErrOffline, e.damage} }

// offlineState holds the first damage found; set once, never cleared.
type offlineState struct {
	err atomic.Pointer[offlineError]
}

// Offline returns why the log went offline (matching ErrOffline), or nil
// while it serves.
func (l *Log) Offline() error {
	if e := l.offline.err.Load(); e != nil {
		return e
	}
	return nil
}

// takeOffline returns err unchanged unless it is a *segment.CorruptionError,
// which takes the log offline: it then returns the offline error.
func (l *Log) takeOffline(err error) error {
	if err == nil {
		return nil // before ce exists: errors.As moves it to the heap, and every read passes here
	}
	var ce *segment.CorruptionError
	if !errors.As(err, &ce) {
		return err
	}
	return l.goOffline(ce)
}

// goOffline records the damage and returns the log's offline error. The
// first damage wins; OnOffline hears of it once, on this goroutine, with no
// log lock held.
func (l *Log) goOffline(ce *segment.CorruptionError) error {
	e := &offlineError{damage: ce}
	if !l.offline.err.CompareAndSwap(nil, e) {
		return l.offline.err.Load()
	}
	l.opts.Logger.Error("damaged record found; the shard log is offline until it is repaired and reopened",
		"dir", l.opts.Dir, "file", ce.File, "pos", ce.Pos, "fault", ce.Reason)
	l.mu.Lock()
	l.space.Broadcast() // appenders waiting for room find the log offline
	l.mu.Unlock()
	if l.opts.OnOffline != nil {
		l.opts.OnOffline(e)
	}
	return e
}
