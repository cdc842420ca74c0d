package netio

import (
	"bytes"
	"context"
	"errors"
	"math"
	"sync"

	"github.com/felixbroker/felix/engine/cache"
	"github.com/felixbroker/felix/netio/wire"
)

func init() {
	frameHandlers[wire.TypeCacheWatch] = (*conn).cacheWatch
	frameHandlers[wire.TypeCacheUnwatch] = (*conn).cacheUnwatch
}

// errUnwatch ends a watch its client asked to end (its OK follows).
var errUnwatch = errors.New("felix/netio: unwatched")

// tryNow is a context that is always done: Watch.Next with it returns an
// event already there, or the context's error at once.
var tryNow = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// connWatches is a connection's cache watches.
type connWatches struct {
	mu     sync.Mutex // guards the fields below; a leaf, like subMu
	lastID uint64
	byID   map[uint64]*watchDeliverer
	ending error // set once the connection's watches must end
}

// watchDeliverer carries one cache watch to its connection: one goroutine
// per watch that starts it (a retained watch or a resnapshot gathers its
// values first, so this is off the loop), answers WATCH_STARTED, then
// pulls events from cache.Watch.Next only while the connection's outbound
// budget has room. A watcher that does not read leaves the watch's queue to
// fill, and the store ends the watch lagged (WATCH_ENDED naming the first
// offset it missed): no writer ever waits for a watcher.
type watchDeliverer struct {
	c         *conn
	id        uint64
	requestID uint64 // CACHE_WATCH's
	h         *cacheHandle
	opts      cache.WatchOptions
	ctx       context.Context
	cancel    context.CancelCauseFunc
	buf       []byte // events encoded for one commit to the outbox

	// guarded by c.watches.mu
	unwatching bool
	unwatchID  uint64
}

// cacheWatch handles CACHE_WATCH: check it, then start the watch's
// deliverer, which answers. A shard this broker does not lead is
// not_leader. Loop only.
func (c *conn) cacheWatch(f wire.Frame) {
	var m wire.CacheWatch
	if err := wire.DecodeControl(f, c.s.cfg.Limits, &m); err != nil {
		c.answer(f.RequestID, toWire(err))
		return
	}
	features := wire.Features(c.features.Load())
	if need := m.RequiredFeatures(); !features.Has(need) {
		c.answer(f.RequestID, &wire.Error{Code: wire.CodeFeatureNotNegotiated,
			Message: "a retained watch needs cache_watch_retained", Details: wire.Details{Feature: need &^ features}})
		return
	}
	h, shard, err := c.cacheKey(m.Cache, m.Key, ActionCacheRead)
	if err == nil {
		_, err = c.watchShard(h, &m, shard)
	}
	if err != nil {
		c.answer(f.RequestID, cacheToWire(err))
		return
	}
	if !c.s.admit() {
		c.answer(f.RequestID, errShuttingDown)
		return
	}
	d := c.addWatch(f.RequestID, h, watchOptions(&m))
	go d.run()
}

// watchShard is the shard a watch reads (a key watch's is its key's),
// which this broker must lead.
func (c *conn) watchShard(h *cacheHandle, m *wire.CacheWatch, keyShard int) (int, error) {
	shard := keyShard
	if m.Prefix {
		if int64(m.Shard) >= int64(h.c.Shards()) {
			return 0, fieldError("shard", "the cache has no such shard")
		}
		shard = int(m.Shard)
	}
	return shard, c.s.caches.leads(h, shard)
}

func watchOptions(m *wire.CacheWatch) cache.WatchOptions {
	o := cache.WatchOptions{Key: bytes.Clone(m.Key), Prefix: m.Prefix, Shard: int(m.Shard), Retained: m.Retained}
	if m.ResumeOffset != nil {
		o.Resume, o.Offset = true, int64(min(*m.ResumeOffset, math.MaxInt64))
	}
	return o
}

// addWatch registers a new deliverer under the connection's next watch id,
// ending it at once when the connection's watches are already ending.
func (c *conn) addWatch(requestID uint64, h *cacheHandle, opts cache.WatchOptions) *watchDeliverer {
	ctx, cancel := context.WithCancelCause(context.Background())
	d := &watchDeliverer{c: c, requestID: requestID, h: h, opts: opts, ctx: ctx, cancel: cancel}
	ws := &c.watches
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.byID == nil {
		ws.byID = map[uint64]*watchDeliverer{}
	}
	ws.lastID++
	d.id = ws.lastID
	if ws.ending != nil {
		cancel(ws.ending)
	}
	ws.byID[d.id] = d
	return d
}

// cacheUnwatch handles CACHE_UNWATCH. The deliverer answers OK as it
// exits, so no event of the watch follows the OK. Loop only.
func (c *conn) cacheUnwatch(f wire.Frame) {
	var m wire.CacheUnwatch
	if err := wire.DecodeControl(f, c.s.cfg.Limits, &m); err != nil {
		c.answer(f.RequestID, toWire(err))
		return
	}
	ws := &c.watches
	ws.mu.Lock()
	d, ok := ws.byID[m.WatchID]
	ok = ok && !d.unwatching
	if ok {
		d.unwatching, d.unwatchID = true, f.RequestID
		d.cancel(errUnwatch)
	}
	ws.mu.Unlock()
	if !ok {
		c.answer(f.RequestID, &wire.Error{Code: wire.CodeNotFound, Message: "no such watch on this connection"})
	}
}

// endWatches ends every watch of the connection: with WATCH_ENDED for a
// reason the client should hear (shutting_down), silently when the
// connection is gone.
func (c *conn) endWatches(reason error) {
	ws := &c.watches
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.ending == nil {
		ws.ending = reason
	}
	for _, d := range ws.byID {
		d.cancel(reason)
	}
}

// removeWatch forgets a deliverer as it exits and reports the
// CACHE_UNWATCH it must answer, if any.
func (c *conn) removeWatch(d *watchDeliverer) (unwatchID uint64, unwatched bool) {
	ws := &c.watches
	ws.mu.Lock()
	defer ws.mu.Unlock()
	delete(ws.byID, d.id)
	return d.unwatchID, d.unwatching
}

// watchCount is how many watches the connection has.
func (c *conn) watchCount() int {
	c.watches.mu.Lock()
	defer c.watches.mu.Unlock()
	return len(c.watches.byID)
}

// run is the deliverer's goroutine: start the watch, answer, deliver until
// the watch ends.
func (d *watchDeliverer) run() {
	defer d.finish()
	w, err := d.h.c.Watch(d.opts)
	if err != nil && d.c.s.caches.redo(d.h, err) { // dropped, and one of its name exists now
		if h, herr := d.c.s.caches.handleOf(d.h.id); herr == nil {
			d.h = h
			w, err = h.c.Watch(d.opts)
		}
	}
	if err != nil {
		d.c.sendError(d.requestID, cacheToWire(err))
		return
	}
	defer w.Close()
	st := w.Started()
	d.c.sendControl(d.requestID, &wire.WatchStarted{WatchID: d.id, RetainedCount: uint64(st.Snapshot),
		Resnapshot: st.Resnapshot, StartOffset: uint64(st.StartOffset), Shard: uint32(st.Shard), Shards: uint32(d.h.c.Shards())})
	d.end(d.deliver(w))
}

// deliver waits for budget, then for an event, then takes every event
// already there up to the room left (at most deliverPullBytesMax), and
// commits them to the outbox in one go; until the watch ends.
func (d *watchDeliverer) deliver(w *cache.Watch) error {
	for {
		room, err := d.c.out.waitRoom(d.ctx)
		if err != nil {
			return err
		}
		ev, err := w.Next(d.ctx)
		if err != nil {
			return err
		}
		d.buf = appendWatchEvent(d.buf[:0], d.id, &ev)
		var end error
		for pull := min(room, deliverPullBytesMax); len(d.buf) < pull; {
			if ev, err = w.Next(tryNow); err != nil {
				if err != context.Canceled { // tryNow's: nothing more there now
					end = err
				}
				break
			}
			d.buf = appendWatchEvent(d.buf, d.id, &ev)
		}
		d.flush()
		if end != nil {
			return end
		}
	}
}

func appendWatchEvent(dst []byte, watchID uint64, ev *cache.Event) []byte {
	m := wire.CacheWatchEvent{WatchID: watchID, Offset: uint64(ev.Offset), Kind: wire.WatchPut,
		Snapshot: ev.Snapshot, Key: ev.Key, Value: ev.Value}
	if ev.Kind == cache.EventDelete {
		m.Kind, m.Value = wire.WatchDelete, nil
	}
	return wire.AppendCacheWatchEvent(dst, 0, m)
}

// flush copies the encoded events into the outbox.
func (d *watchDeliverer) flush() {
	o := d.c.out
	b := o.begin()
	o.commit(append(b, d.buf...))
	if cap(d.buf) > deliverKeepBytes {
		d.buf = nil
	}
}

// end says why the watch ended, if the client should hear it: WATCH_ENDED
// for the store's reasons (lagged, with the first offset missed; the cache
// dropped; the store closing) and for Stop; nothing for a CACHE_UNWATCH
// (its OK follows) or a closed connection.
func (d *watchDeliverer) end(err error) {
	if d.ctx.Err() != nil {
		err = context.Cause(d.ctx)
	}
	if errors.Is(err, errUnwatch) || errors.Is(err, errConnClosed) {
		return
	}
	e := cacheToWire(err)
	if e.Code == wire.CodeInternal {
		d.c.s.cfg.Logger.Error("cache watch failed", "watch", d.id, "remote", d.c.remote, "err", err)
	}
	d.c.sendControl(0, &wire.WatchEnded{WatchID: d.id, Code: e.Code, Message: e.Message,
		FirstMissedOffset: e.Details.FirstMissedOffset})
}

// finish forgets the watch, answers a pending CACHE_UNWATCH, and ends the
// deliverer's unit of work.
func (d *watchDeliverer) finish() {
	d.cancel(errConnClosed)
	if id, ok := d.c.removeWatch(d); ok {
		d.c.sendOK(id)
	}
	d.c.s.work.done()
}
