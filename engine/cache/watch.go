package cache

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	"github.com/felixbroker/felix/segment"
)

// WatchOptions configure a watch.
type WatchOptions struct {
	// Key is the key watched, or with Prefix every key starting with it
	// (an empty prefix matches every key).
	Key    []byte
	Prefix bool
	// Shard is the shard a prefix watch reads: offsets are per shard, so
	// watching a prefix of a cache with several shards takes one watch per
	// shard. A key watch reads its key's shard and ignores Shard.
	Shard int
	// Where delivery starts: by default with the writes after the watch
	// starts; with Resume at Offset (every write from Offset on, replayed
	// from the log, then live); with Retained from the current value of
	// every matching key, then live.
	Resume   bool
	Offset   int64
	Retained bool
	// Queue bounds; zero takes the store's defaults. A watch whose queue
	// is full ends with a *LaggedError.
	QueueEvents int
	QueueBytes  int
}

// WatchStart is what a watch reports when it starts (WATCH_STARTED).
type WatchStart struct {
	Shard int
	// Snapshot is how many events marked Snapshot come first: the
	// retained values, or with Resnapshot the current values that replace
	// a resume offset compaction had collapsed. Zero is a definite zero.
	Snapshot   int
	Resnapshot bool
	// StartOffset is where the replay (Resume) or live delivery begins.
	StartOffset int64
}

// EventKind is what a watch event reports.
type EventKind uint8

// The event kinds, as the wire carries them.
const (
	EventPut    EventKind = iota + 1 // a value written (Value set)
	EventDelete                      // a delete (no value)
)

// Event is one write delivered by a watch. Key and Value are valid until
// the next call of Next.
type Event struct {
	Kind      EventKind
	Offset    int64 // the log offset of the write
	Snapshot  bool  // a current value delivered at the start
	Key       []byte
	Value     []byte
	ExpiresAt int64
}

// Watch delivers the writes of one key, or of a prefix on one shard, in
// the shard's write order, each with its offset. Next is for one
// goroutine; Close and Stats are safe from any.
type Watch struct {
	sh     *shard
	key    []byte
	prefix bool
	start  WatchStart
	notify chan struct{}

	// The reader's own (Next's goroutine).
	snap recordBuf // snapshot events not yet delivered
	hist recordBuf // history read from the log, not yet delivered
	cur  []byte    // the live record Next returned last

	// mu guards the fields below. Lock order: shard.watchMu, then mu.
	mu        sync.Mutex
	next      int64 // catch-up: the next offset to read; live: offsets below are skipped
	live      bool
	queue     eventQueue
	err       error
	delivered uint64
}

// catchUpBytes is how much history one read of a catching-up watch takes.
const catchUpBytes = 256 << 10

// Watch starts a watch. A retained watch, and one resuming from an offset
// compaction has collapsed (offset below the shard's CompactedThrough),
// first gathers the matching keys' current values: the returned watch's
// Started says how many. Resuming past the shard's end is an *OffsetError.
func (c *Cache) Watch(opts WatchOptions) (*Watch, error) {
	sh, err := c.watchShard(opts)
	if err != nil {
		return nil, err
	}
	if err := sh.serving(); err != nil {
		return nil, err
	}
	led := sh.led.Load()
	o := c.store.opts
	w := &Watch{sh: sh, key: bytes.Clone(opts.Key), prefix: opts.Prefix, notify: make(chan struct{}, 1)}
	w.queue = eventQueue{maxEvents: cmp0(opts.QueueEvents, o.WatchQueueEvents), maxBytes: cmp0(opts.QueueBytes, o.WatchQueueBytes)}
	w.start.Shard = sh.index
	switch {
	case opts.Retained:
		err = sh.startSnapshot(w, false)
	case opts.Resume:
		err = sh.startResume(w, opts.Offset)
	default:
		err = sh.startLive(w)
	}
	if err == nil {
		err = sh.readLeads(led) // what it read, it read while the shard led
	}
	if err != nil {
		w.Close()
		return nil, sh.refused(err) // a stopping shard says why
	}
	return w, nil
}

func cmp0(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

func (c *Cache) watchShard(opts WatchOptions) (*shard, error) {
	switch {
	case opts.Retained && opts.Resume:
		return nil, fmt.Errorf("%w: a retained watch starts from current state and cannot also resume", ErrInvalidWatch)
	case len(opts.Key) > c.store.opts.KeyBytesMax:
		return nil, ErrKeyTooLarge
	case opts.Prefix && (opts.Shard < 0 || opts.Shard >= len(c.shards)):
		return nil, fmt.Errorf("%w: shard %d of %d", ErrNoShard, opts.Shard, len(c.shards))
	case opts.Prefix:
		if sh := c.held(opts.Shard); sh != nil {
			return sh, nil
		}
		return nil, c.absent(opts.Shard)
	}
	sh, _, err := c.route(opts.Key)
	return sh, err
}

// Started is what the watch reported when it started.
func (w *Watch) Started() WatchStart { return w.start }

func (w *Watch) matches(key []byte) bool {
	if w.prefix {
		return bytes.HasPrefix(key, w.key)
	}
	return bytes.Equal(key, w.key)
}

// startLive registers the watch for the writes that become visible from
// now on.
func (sh *shard) startLive(w *Watch) error {
	sh.watchMu.Lock()
	defer sh.watchMu.Unlock()
	if err := sh.registrable(); err != nil {
		return err
	}
	w.next, w.live = sh.visible(), true
	w.start.StartOffset = w.next
	sh.watches[w] = struct{}{}
	return nil
}

// startResume registers a watch that replays the log from offset before it
// goes live (register before read: see catchUp), or resnapshots when
// compaction has collapsed the offset.
func (sh *shard) startResume(w *Watch, offset int64) error {
	if end := sh.visible(); offset < 0 || offset > end {
		return &OffsetError{Offset: offset, End: end}
	}
	if offset < sh.log().CompactedThrough() {
		return sh.startSnapshot(w, true)
	}
	sh.watchMu.Lock()
	defer sh.watchMu.Unlock()
	if err := sh.registrable(); err != nil {
		return err
	}
	if end := sh.visible(); offset > end { // a new leadership's log may be shorter
		return &OffsetError{Offset: offset, End: end}
	}
	w.next, w.start.StartOffset = offset, offset
	sh.watches[w] = struct{}{}
	return nil
}

// fanOut hands the records of one flush to the live watches; it runs on
// the log's committer and never waits for a watcher: one whose queue is
// full is ended with the first offset it missed.
func (sh *shard) fanOut(records []byte) {
	sh.watchMu.Lock()
	defer sh.watchMu.Unlock()
	sh.fanOutLocked(records)
}

// fanOutLocked is fanOut with watchMu held.
func (sh *shard) fanOutLocked(records []byte) {
	for w := range sh.watches {
		if w.offer(records) {
			delete(sh.watches, w)
		}
	}
}

// offer queues the matching live records of one flush; called under
// shard.watchMu. It reports whether the watch ended.
func (w *Watch) offer(records []byte) (ended bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.live || w.err != nil {
		return false
	}
	added := false
	it := segment.NewIter(records)
	for {
		at := it.Pos()
		r, ok := it.Next()
		if !ok {
			break
		}
		if r.Offset < w.next {
			continue
		}
		w.next = r.Offset + 1
		if isControl(&r) || !w.matches(r.Key) {
			continue
		}
		size := r.Size()
		if !w.queue.fits(size) {
			w.end(&LaggedError{FirstMissed: r.Offset})
			return true
		}
		w.queue.push(records[at : at+size])
		added = true
	}
	if added {
		w.wake()
	}
	return false
}

// Next returns the next event: the snapshot's first, then history (for a
// resumed watch), then live writes. It waits for one, and returns the
// watch's end (*LaggedError, ErrClosed, ErrCacheDropped, or an
// *engine.NotLeaderError when this broker no longer holds the shard: watch
// it at the leader named) once events stop, or ctx's error.
func (w *Watch) Next(ctx context.Context) (Event, error) {
	for {
		if r, ok := w.snap.next(); ok {
			return eventOf(&r, true)
		}
		if r, ok := w.nextHistory(); ok {
			return eventOf(&r, false)
		}
		w.mu.Lock()
		switch {
		case !w.queue.empty():
			w.cur = w.queue.pop(w.cur)
			w.delivered++
			w.mu.Unlock()
			r, _, err := segment.DecodeRecord(w.cur)
			if err != nil {
				return Event{}, err
			}
			return eventOf(&r, false)
		case w.err != nil:
			err := w.err
			w.mu.Unlock()
			return Event{}, err
		case !w.live:
			from := w.next
			w.mu.Unlock()
			w.catchUp(from)
			continue
		default:
			w.mu.Unlock()
		}
		select {
		case <-w.notify:
		case <-ctx.Done():
			return Event{}, ctx.Err()
		}
	}
}

// nextHistory returns the next matching record of the history read.
func (w *Watch) nextHistory() (segment.Record, bool) {
	for {
		r, ok := w.hist.next()
		if !ok {
			return r, false
		}
		if !isControl(&r) && w.matches(r.Key) {
			w.mu.Lock()
			w.delivered++
			w.mu.Unlock()
			return r, true
		}
	}
}

// catchUp reads the next piece of history from the log. The check that
// compaction has not removed records from the read position on, and the
// read itself, are one step under the shard's compactMu; a watch that
// compaction overtook ends with a *LaggedError (Compacted) naming where it
// was, and resuming from there resnapshots. When there is no more history
// it goes live under the shard's watchMu, so no record that becomes
// visible in between is missed, and none is delivered twice (live records
// below next are skipped).
func (w *Watch) catchUp(from int64) {
	sh := w.sh
	sh.compactMu.RLock()
	if from < sh.log().CompactedThrough() {
		sh.compactMu.RUnlock()
		w.stop(&LaggedError{FirstMissed: from, Compacted: true})
		return
	}
	out, next, err := sh.readVisible(from, catchUpBytes, w.hist.b[:0])
	sh.compactMu.RUnlock()
	if err != nil {
		w.stop(err)
		return
	}
	if next > from {
		w.hist.reset(out)
		w.mu.Lock()
		w.next = next
		w.mu.Unlock()
		return
	}
	sh.watchMu.Lock()
	w.mu.Lock()
	if w.err == nil && sh.visible() == w.next {
		w.live = true
	}
	w.mu.Unlock()
	sh.watchMu.Unlock()
}

// eventOf turns a record into an event.
func eventOf(r *segment.Record, snapshot bool) (Event, error) {
	ev := Event{Kind: EventPut, Offset: r.Offset, Snapshot: snapshot, Key: r.Key}
	if isDelete(r) {
		ev.Kind = EventDelete
		return ev, nil
	}
	value, exp, err := valueOf(r)
	ev.Value, ev.ExpiresAt = value, exp
	return ev, err
}

// end records why the watch ended and wakes the reader; mu held.
func (w *Watch) end(err error) {
	if w.err == nil {
		w.err = err
	}
	w.live = false
	w.wake()
}

// stop ends the watch and unregisters it.
func (w *Watch) stop(err error) {
	w.sh.watchMu.Lock()
	delete(w.sh.watches, w)
	w.sh.watchMu.Unlock()
	w.mu.Lock()
	w.end(err)
	w.mu.Unlock()
}

func (w *Watch) wake() {
	select {
	case w.notify <- struct{}{}:
	default:
	}
}

// Close ends the watch; Next returns ErrClosed once what is queued is
// delivered. Closing twice is harmless.
func (w *Watch) Close() { w.stop(ErrClosed) }

// WatchStats is a snapshot of a watch's counters.
type WatchStats struct {
	Next      int64 // offset delivery has reached
	Delivered uint64
	Queued    int
	Live      bool
}

// Stats returns the watch's counters.
func (w *Watch) Stats() WatchStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return WatchStats{Next: w.next, Delivered: w.delivered, Queued: w.queue.n, Live: w.live}
}

// endWatches ends every watch of a stopping shard with err.
func (sh *shard) endWatches(err error) {
	sh.watchMu.Lock()
	defer sh.watchMu.Unlock()
	sh.stopped = err
	for w := range sh.watches {
		w.mu.Lock()
		w.end(err)
		w.mu.Unlock()
		delete(sh.watches, w)
	}
}
