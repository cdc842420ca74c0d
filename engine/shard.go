package engine

import (
	"sync"
)

// Shard is one shard of a stream: its log and the subscriptions reading it.
type Shard struct {
	stream *Stream
	index  int
	log    logStore

	subMu  sync.Mutex // guards subs and closed; taken by the log's OnVisible
	subs   map[*Subscription]struct{}
	closed error // set when the shard stops: ErrClosed or ErrStreamDeleted
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
	for s := range sh.subs {
		if s.offer(records) {
			delete(sh.subs, s)
		}
	}
}

// stop ends every subscription with err and closes the log.
func (sh *Shard) stop(err error) error {
	sh.subMu.Lock()
	sh.closed = err
	for s := range sh.subs {
		s.mu.Lock()
		s.end(err)
		s.mu.Unlock()
		delete(sh.subs, s)
	}
	sh.subMu.Unlock()
	return sh.log.Close()
}
