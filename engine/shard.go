package engine

import (
	"errors"
	"io"
	"sync"

	"github.com/felixbroker/felix/engine/shardlog"
)

// Shard is one shard of a stream: its log and the subscriptions reading it.
type Shard struct {
	stream *Stream
	index  int
	dir    string // the durable log's directory; "" for a shard in memory
	log    logStore
	local  *shardlog.Log // a replicated shard's own log under log: for time lookups and usage

	subMu    sync.Mutex // guards subs, changed, attached and closed; taken by the log's OnVisible
	subs     map[*Subscription]struct{}
	changed  chan struct{} // closed at the next visibility; nil while nobody waits
	attached []io.Closer   // closed when the shard stops, before its log
	closed   error         // set when the shard stops: ErrClosed or ErrStreamDeleted
}

// closedChan is what Changed returns once a shard has stopped.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Stream is the stream the shard belongs to.
func (sh *Shard) Stream() *Stream { return sh.stream }

// Dir is the directory of a durable shard's log ("" for a shard in memory).
// State that lives beside the shard's records (consumer groups) goes under
// it, so deleting the stream removes it too.
func (sh *Shard) Dir() string { return sh.dir }

// Changed returns a channel that is closed when records next become
// visible on the shard, or when the shard stops. Take it before looking at
// End: a record made visible in between still closes it. One channel
// serves every waiter of a visibility.
func (sh *Shard) Changed() <-chan struct{} {
	sh.subMu.Lock()
	defer sh.subMu.Unlock()
	if sh.closed != nil {
		return closedChan
	}
	if sh.changed == nil {
		sh.changed = make(chan struct{})
	}
	return sh.changed
}

// Attach registers c to be closed when the shard stops (engine Close,
// stream deletion), before the shard's log closes and its directory is
// removed. It returns why the shard stopped when it already has.
func (sh *Shard) Attach(c io.Closer) error {
	sh.subMu.Lock()
	defer sh.subMu.Unlock()
	if sh.closed != nil {
		return sh.closed
	}
	sh.attached = append(sh.attached, c)
	return nil
}

// Err is why the shard stopped (ErrClosed, ErrStreamDeleted) or went
// offline (a damaged record: shard_offline.go), nil while it serves.
func (sh *Shard) Err() error {
	sh.subMu.Lock()
	defer sh.subMu.Unlock()
	return sh.closed
}

// ApplyRetention applies the stream's retention to a durable shard now
// (its log also does so every few seconds on its own) and returns how many
// segments it removed.
func (sh *Shard) ApplyRetention() int {
	if r, ok := sh.log.(interface{ ApplyRetention() (int, int64) }); ok {
		n, _ := r.ApplyRetention()
		return n
	}
	return 0
}

// Index is the shard's number within its stream.
func (sh *Shard) Index() int { return sh.index }

// Start is the oldest offset the shard holds; End one past the newest
// acknowledged one.
func (sh *Shard) Start() int64 { return sh.log.Start() }

// End is one past the newest acknowledged offset.
func (sh *Shard) End() int64 { return sh.log.End() }

// Read returns framed records from offset from, as shardlog.Log.Read does.
func (sh *Shard) Read(from int64, maxBytes int, dst []byte) ([]byte, int64, error) {
	out, next, err := sh.log.Read(from, maxBytes, dst)
	return out, next, translateLogErr(err)
}

// onVisible fans the records of one flush out to the live subscriptions.
// It runs on the log's committer (or the memory log's appender) and never
// blocks on a subscriber: a full queue drops or ends, per its policy.
func (sh *Shard) onVisible(_, _ int64, records []byte) {
	sh.subMu.Lock()
	defer sh.subMu.Unlock()
	sh.visibleLocked(records)
}

// visibleLocked is onVisible with subMu held.
func (sh *Shard) visibleLocked(records []byte) {
	if sh.changed != nil {
		close(sh.changed)
		sh.changed = nil
	}
	for s := range sh.subs {
		if s.offer(records) {
			delete(sh.subs, s)
		}
	}
}

// endSubscriptions ends every live subscription with err, leaving the
// shard open (a replicated shard whose leadership left this broker: its
// subscribers go to the new leader).
func (sh *Shard) endSubscriptions(err error) {
	sh.subMu.Lock()
	defer sh.subMu.Unlock()
	for s := range sh.subs {
		s.mu.Lock()
		s.end(err)
		s.mu.Unlock()
		delete(sh.subs, s)
	}
}

// endLocked marks the shard ended by err, ends every subscription with it
// and wakes every Changed waiter. subMu held.
func (sh *Shard) endLocked(err error) {
	sh.closed = err
	for s := range sh.subs {
		s.mu.Lock()
		s.end(err)
		s.mu.Unlock()
		delete(sh.subs, s)
	}
	if sh.changed != nil {
		close(sh.changed)
		sh.changed = nil
	}
}

// stop ends every subscription with err, wakes every Changed waiter,
// closes what was attached and then the log.
func (sh *Shard) stop(err error) error {
	sh.subMu.Lock()
	sh.endLocked(err)
	attached := sh.attached
	sh.attached = nil
	sh.subMu.Unlock()
	var errs []error
	for _, c := range attached {
		errs = append(errs, c.Close())
	}
	return errors.Join(append(errs, sh.log.Close())...)
}
