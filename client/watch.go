package client

import (
	"bytes"
	"context"
	"fmt"
	"iter"
	"math"
	"sync"

	"github.com/felixbroker/felix/netio/wire"
)

// WatchEventKind is what a WatchEvent tells the application.
type WatchEventKind uint8

const (
	// WatchPut: a live write of Key with Value, at Offset.
	WatchPut WatchEventKind = iota + 1
	// WatchDelete: a live delete of Key (no Value), at Offset.
	WatchDelete
	// WatchSnapshot: the current value of Key, at the Offset of the write
	// that produced it; state, not a change. A retained watch starts with
	// them, and so does a watch after WatchReset.
	WatchSnapshot
	// WatchSynced: the snapshot is complete (Count values, possibly 0:
	// joining an empty key is a definite zero); live changes follow.
	WatchSynced
	// WatchReset: the offset the watch resumed from was compacted away,
	// so the changes since cannot be replayed. The application must drop
	// the state it built from this watch: WatchSnapshot events with the
	// current values follow, then WatchSynced.
	WatchReset
	// WatchLagged: the broker ended the watch because it fell behind;
	// FirstMissed is the first offset it did not deliver. With
	// WithWatchResumeOnLag (the default) the watch resumes from there on its
	// own: the changes are replayed from the log, or a WatchReset follows
	// if compaction took them. Nothing is lost either way.
	WatchLagged
)

func (k WatchEventKind) String() string {
	switch k {
	case WatchPut:
		return "put"
	case WatchDelete:
		return "delete"
	case WatchSnapshot:
		return "snapshot"
	case WatchSynced:
		return "synced"
	case WatchReset:
		return "reset"
	case WatchLagged:
		return "lagged"
	}
	return fmt.Sprintf("WatchEventKind(%d)", uint8(k))
}

// WatchEvent is one event of a Watch. Key and Value are the event's own.
type WatchEvent struct {
	Kind   WatchEventKind
	Shard  int
	Offset int64 // WatchPut, WatchDelete, WatchSnapshot
	Key    []byte
	Value  []byte
	// Count is the number of snapshot values WatchSynced closes.
	Count int
	// FirstMissed is the offset WatchLagged resumes from.
	FirstMissed int64
}

// WatchOption adjusts a watch. Options are plain values: passing them
// allocates nothing.
type WatchOption struct {
	set    uint8
	offset int64
	shard  int
	n      int
	resume bool
}

const (
	watchOptResume uint8 = 1 << iota
	watchOptPrefix
	watchOptBuffer
	watchOptOnLag
)

// WithResumeAt starts the watch at offset (a previous watch's ResumeOffset):
// every write from there on is delivered, replayed from the log and then
// live, with no gap and no duplicate. An offset compaction has collapsed
// starts with WatchReset instead. Not with WatchRetained.
func WithResumeAt(offset int64) WatchOption { return WatchOption{set: watchOptResume, offset: offset} }

// WithPrefixOnShard makes the key a prefix: the watch sees every key starting
// with it that lives on shard. Offsets are per shard, so watching a prefix
// of a cache with several shards takes one watch per shard (Shards says
// how many there are).
func WithPrefixOnShard(shard int) WatchOption { return WatchOption{set: watchOptPrefix, shard: shard} }

// WithWatchBuffer sets how many received events wait for the reader
// (DefaultWatchBuffer). When they are not taken the watch's connection
// stops reading, and the broker ends the watch lagged once its own queue
// is full.
func WithWatchBuffer(n int) WatchOption { return WatchOption{set: watchOptBuffer, n: n} }

// WithWatchResumeOnLag says whether a watch the broker ended for lagging
// resumes on its own from the first offset it missed (the default), or
// ends with an error matching ErrCacheWatchLagged.
func WithWatchResumeOnLag(on bool) WatchOption { return WatchOption{set: watchOptOnLag, resume: on} }

// prefixShard is the shard a WithPrefixOnShard among opts names (the
// last one wins), and whether one does.
func prefixShard(opts []WatchOption) (shard int, prefix bool) {
	for _, o := range opts {
		if o.set&watchOptPrefix != 0 {
			shard, prefix = o.shard, true
		}
	}
	return shard, prefix
}

// DefaultWatchBuffer is the number of events a watch reads ahead.
const DefaultWatchBuffer = 1024

type watchSpec struct {
	key      []byte
	prefix   bool
	shard    int
	retained bool
	resume   bool
	offset   int64
	buffer   int
	onLag    bool
}

func watchSpecOf(key []byte, retained bool, opts []WatchOption) (watchSpec, error) {
	sp := watchSpec{key: bytes.Clone(key), retained: retained, buffer: DefaultWatchBuffer, onLag: true}
	for _, o := range opts {
		switch o.set {
		case watchOptResume:
			sp.resume, sp.offset = true, o.offset
		case watchOptPrefix:
			sp.prefix, sp.shard = true, o.shard
		case watchOptBuffer:
			sp.buffer = max(o.n, 1)
		case watchOptOnLag:
			sp.onLag = o.resume
		}
	}
	switch {
	case sp.resume && sp.retained:
		return sp, localInvalid("watch", "a retained watch starts from current state and cannot also resume")
	case sp.resume && sp.offset < 0:
		return sp, localInvalid("offset", "an offset is never negative")
	case sp.prefix && (sp.shard < 0 || sp.shard > math.MaxUint32):
		return sp, localInvalid("shard", "out of range")
	}
	return sp, nil
}

// WatchEndedError says why a watch ended and where to resume: errors.Is
// matches its cause (ErrNotFound when the cache was dropped,
// ErrShuttingDown, ErrCacheWatchLagged without WithWatchResumeOnLag,
// ErrConnectionLost, ErrClosed).
type WatchEndedError struct {
	Cache CacheName
	Key   []byte
	// ResumeOffset is where a new watch (WithResumeAt) picks up with nothing
	// missed.
	ResumeOffset int64
	Err          error
}

func (e *WatchEndedError) Error() string {
	return fmt.Sprintf("felix/client: watch of %q on %s ended (resume at %d): %v", e.Key, e.Cache, e.ResumeOffset, e.Err)
}

// Unwrap returns the cause.
func (e *WatchEndedError) Unwrap() error { return e.Err }

// Watch delivers the writes of one key, or of a prefix on one shard, in
// the shard's write order, each with its offset, over a connection of its
// own: a slow reader holds back only itself, and the broker ends a watch
// that falls too far behind (WatchLagged). Next and Events are for one
// reader at a time; Close and the accessors are safe from any goroutine.
type Watch struct {
	cache  *Cache
	spec   watchSpec
	notify chan struct{} // capacity 1: an item or the end arrived

	// mu guards the fields below.
	mu       sync.Mutex
	conn     *conn
	items    []watchItem // a ring of received frames
	head, n  int
	room     chan struct{} // closed when the reader takes an item from a full ring
	shard    int
	shards   int
	next     int64 // resume offset: after the last live event, or where live started
	snapLeft int   // snapshot events still due before WatchSynced
	snapN    int
	pending  []WatchEvent // events decided but not yet returned (a reset before its snapshot)
	end      error
	closed   bool
}

// watchItem is one frame of the watch's connection, decoded; its slices
// alias the frame's own copy.
type watchItem struct {
	typ     wire.Type
	ev      wire.CacheWatchEvent
	started wire.WatchStarted
	ended   wire.WatchEnded
}

// Watch watches key: every write of it from now on (or from WithResumeAt's
// offset), or with WithPrefixOnShard every key starting with it on one shard.
// It dials a connection of its own and returns once the broker has
// started the watch.
func (ca *Cache) Watch(ctx context.Context, key []byte, opts ...WatchOption) (*Watch, error) {
	return ca.watch(ctx, key, false, opts)
}

// WatchRetained is Watch starting from current state: the current value of
// the key (or of every key with the prefix) comes first as WatchSnapshot
// events, then WatchSynced with their count, then live changes. Nothing
// written meanwhile is missed or delivered twice.
func (ca *Cache) WatchRetained(ctx context.Context, key []byte, opts ...WatchOption) (*Watch, error) {
	return ca.watch(ctx, key, true, opts)
}

func (ca *Cache) watch(ctx context.Context, key []byte, retained bool, opts []WatchOption) (*Watch, error) {
	sp, err := watchSpecOf(key, retained, opts)
	if err != nil {
		return nil, err
	}
	c := ca.client
	if err := c.open(); err != nil {
		return nil, err
	}
	cn, err := dialConn(ctx, c.addr, &c.opts, &c.ids)
	if err != nil {
		return nil, err
	}
	w := &Watch{cache: ca, spec: sp, notify: make(chan struct{}, 1), items: make([]watchItem, sp.buffer), next: sp.offset}
	w.conn = cn
	watches.add(c, w, cn)
	var resume *int64
	if sp.resume {
		resume = &sp.offset
	}
	if err := w.start(ctx, resume); err != nil {
		_ = w.Close()
		return nil, err
	}
	if err := c.open(); err != nil { // a Close that raced the watch ends it too
		_ = w.Close()
		return nil, err
	}
	return w, nil
}

// start sends CACHE_WATCH on the watch's connection and waits for
// WATCH_STARTED, which the reader goroutine queues before any event.
func (w *Watch) start(ctx context.Context, resume *int64) error {
	cn := w.conn
	m := &wire.CacheWatch{Cache: w.cache.name.ref(), Key: w.spec.key, Prefix: w.spec.prefix,
		Shard: uint32(w.spec.shard), Retained: w.spec.retained}
	if resume != nil {
		m.ResumeOffset = wire.U64(uint64(*resume))
	}
	if err := cn.limits.CheckCacheRef(m.Cache); err != nil {
		return localError(err)
	}
	if err := cn.limits.CheckKey(m.Key); err != nil {
		return localError(err)
	}
	cl := newCall(false)
	if err := cn.control(ctx, m, cl); err != nil {
		return err
	}
	if cl.ftype != wire.TypeWatchStarted {
		return fmt.Errorf("%w: %v in answer to CACHE_WATCH", ErrProtocol, cl.ftype)
	}
	return nil
}

// Cache is the cache watched.
func (w *Watch) Cache() *Cache { return w.cache }

// Shard is the shard the watch reads; Shards the cache's number of shards.
func (w *Watch) Shard() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.shard
}

// Shards is the cache's number of shards, as the broker reported it.
func (w *Watch) Shards() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.shards
}

// ResumeOffset is where a new watch (WithResumeAt) would pick up, missing
// nothing this one has not delivered: after the last live event, or where
// live delivery started.
func (w *Watch) ResumeOffset() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.next
}

// Next waits for the next event, within ctx. Once the watch has ended it
// returns a *WatchEndedError (after every event already received), or
// ErrClosed after Close.
func (w *Watch) Next(ctx context.Context) (WatchEvent, error) {
	for {
		w.mu.Lock()
		if w.closed {
			w.mu.Unlock()
			return WatchEvent{}, ErrClosed
		}
		if len(w.pending) > 0 {
			ev := w.pending[0]
			w.pending = w.pending[1:]
			w.mu.Unlock()
			return ev, nil
		}
		if w.n > 0 {
			it := w.pop()
			ev, ok, lag := w.interpret(&it)
			w.mu.Unlock()
			if lag != nil {
				return w.lagged(ctx, lag)
			}
			if ok {
				return ev, nil
			}
			continue
		}
		if w.end != nil {
			err := &WatchEndedError{Cache: w.cache.name, Key: w.spec.key, ResumeOffset: w.next, Err: w.end}
			w.mu.Unlock()
			return WatchEvent{}, err
		}
		dead := w.conn.dead
		w.mu.Unlock()
		select {
		case <-w.notify:
		case <-dead:
			w.lost()
		case <-ctx.Done():
			return WatchEvent{}, ctx.Err()
		}
	}
}

// Events iterates the watch's events:
//
//	for ev, err := range w.Events(ctx) {
//		if err != nil {
//			// the watch ended, or ctx did
//		}
//		switch ev.Kind { case client.WatchReset: state = map[string][]byte{} ... }
//	}
//
// The last pair carries the error that ended the iteration; breaking out of
// the loop leaves the watch open.
func (w *Watch) Events(ctx context.Context) iter.Seq2[WatchEvent, error] {
	return func(yield func(WatchEvent, error) bool) {
		for {
			ev, err := w.Next(ctx)
			if err != nil {
				yield(WatchEvent{}, err)
				return
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// interpret turns a received frame into the event it means, if any; mu
// held. A WATCH_ENDED that the watch resumes from comes back as lag.
func (w *Watch) interpret(it *watchItem) (ev WatchEvent, ok bool, lag *wire.WatchEnded) {
	switch it.typ {
	case wire.TypeWatchStarted:
		return w.started(&it.started)
	case wire.TypeCacheWatchEvent:
		return w.event(&it.ev), true, nil
	case wire.TypeWatchEnded:
		m := &it.ended
		if m.Code == wire.CodeCacheWatchLagged && m.FirstMissedOffset != nil && w.spec.onLag {
			return WatchEvent{}, false, m
		}
		if m.FirstMissedOffset != nil && int64(*m.FirstMissedOffset) < w.next {
			w.next = int64(*m.FirstMissedOffset)
		}
		w.end = &ServerError{Code: Code(m.Code), Name: m.Code.String(), Message: m.Message,
			Details: Details{FirstMissedOffset: offsetPtr(m.FirstMissedOffset)}}
	}
	return WatchEvent{}, false, nil
}

// started takes WATCH_STARTED: a reset before a resnapshot, WatchSynced at
// once for an empty snapshot. mu held.
func (w *Watch) started(m *wire.WatchStarted) (WatchEvent, bool, *wire.WatchEnded) {
	w.shard, w.shards = int(m.Shard), max(int(m.Shards), 1)
	w.next = int64(m.StartOffset)
	w.snapLeft, w.snapN = int(m.RetainedCount), int(m.RetainedCount)
	synced := WatchEvent{Kind: WatchSynced, Shard: w.shard}
	switch {
	case m.Resnapshot && m.RetainedCount == 0:
		w.pending = append(w.pending, synced)
		return WatchEvent{Kind: WatchReset, Shard: w.shard}, true, nil
	case m.Resnapshot:
		return WatchEvent{Kind: WatchReset, Shard: w.shard}, true, nil
	case w.spec.retained && m.RetainedCount == 0:
		return synced, true, nil
	}
	return WatchEvent{}, false, nil
}

// event turns CACHE_WATCH_EVENT into the application's event; after the
// last snapshot value, WatchSynced follows. mu held.
func (w *Watch) event(m *wire.CacheWatchEvent) WatchEvent {
	ev := WatchEvent{Kind: WatchPut, Shard: w.shard, Offset: int64(m.Offset), Key: m.Key, Value: m.Value}
	switch {
	case m.Snapshot:
		ev.Kind = WatchSnapshot
		if w.snapLeft > 0 {
			w.snapLeft--
			if w.snapLeft == 0 {
				w.pending = append(w.pending, WatchEvent{Kind: WatchSynced, Shard: w.shard, Count: w.snapN})
			}
		}
		return ev
	case m.Kind == wire.WatchDelete:
		ev.Kind, ev.Value = WatchDelete, nil
	}
	w.next = ev.Offset + 1
	return ev
}

// lagged reports the lag and resumes from the first missed offset, on the
// same connection: nothing of the ended watch follows its WATCH_ENDED, so
// the ring is empty while the new watch starts.
func (w *Watch) lagged(ctx context.Context, m *wire.WatchEnded) (WatchEvent, error) {
	from := int64(*m.FirstMissedOffset)
	w.mu.Lock()
	w.next = from
	w.mu.Unlock()
	if err := w.start(ctx, &from); err != nil {
		// The watch is over: its connection goes, so a start the broker
		// answers late delivers nothing, and Next reports err.
		w.mu.Lock()
		if w.end == nil {
			w.end = err
		}
		w.mu.Unlock()
		w.conn.die(err)
	}
	return WatchEvent{Kind: WatchLagged, Shard: w.Shard(), FirstMissed: from}, nil
}

// lost ends the watch whose connection died, once what it received is
// taken.
func (w *Watch) lost() {
	w.mu.Lock()
	if w.end == nil {
		w.end = w.conn.deathErr()
		if w.end == nil {
			w.end = ErrConnectionLost
		}
	}
	w.mu.Unlock()
}

// pop takes the oldest received frame; mu held, n > 0.
func (w *Watch) pop() watchItem {
	it := w.items[w.head]
	w.items[w.head] = watchItem{}
	w.head = (w.head + 1) % len(w.items)
	w.n--
	if w.room != nil {
		close(w.room)
		w.room = nil
	}
	return it
}

// Close ends the watch: its connection is closed (which ends the watch at
// the broker), received events are discarded, and Next returns ErrClosed.
// Closing twice is harmless.
func (w *Watch) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	clear(w.items)
	w.n = 0
	if w.room != nil {
		close(w.room)
		w.room = nil
	}
	cn := w.conn
	w.mu.Unlock()
	w.wake()
	watches.remove(w.cache.client, w, cn)
	cn.die(ErrClosed)
	return nil
}

func (w *Watch) wake() {
	select {
	case w.notify <- struct{}{}:
	default:
	}
}
