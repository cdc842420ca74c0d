package client

import (
	"fmt"
	"sync"

	"github.com/felixbroker/felix/netio/wire"
)

func init() {
	frameHooks[wire.TypeWatchStarted] = (*conn).onWatchFrame
	frameHooks[wire.TypeCacheWatchEvent] = (*conn).onWatchFrame
	frameHooks[wire.TypeWatchEnded] = (*conn).onWatchFrame
}

// watches knows the Watch each watch connection carries (one at a time: a
// watch that resumes after lagging starts again on the same connection),
// and the watches of each Client, which Client.Close ends.
var watches = watchRegistry{byConn: map[*conn]*Watch{}, byClient: map[*Client]map[*Watch]struct{}{}}

type watchRegistry struct {
	mu       sync.Mutex
	byConn   map[*conn]*Watch
	byClient map[*Client]map[*Watch]struct{}
}

func (r *watchRegistry) add(c *Client, w *Watch, cn *conn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.byConn[cn] = w
	if r.byClient[c] == nil {
		r.byClient[c] = map[*Watch]struct{}{}
	}
	r.byClient[c][w] = struct{}{}
}

func (r *watchRegistry) remove(c *Client, w *Watch, cn *conn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.byConn, cn)
	delete(r.byClient[c], w)
	if len(r.byClient[c]) == 0 {
		delete(r.byClient, c)
	}
}

func (r *watchRegistry) of(cn *conn) *Watch {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byConn[cn]
}

// closeWatches ends every watch of the client (Client.Close).
func (c *Client) closeWatches() {
	watches.mu.Lock()
	ws := make([]*Watch, 0, len(watches.byClient[c]))
	for w := range watches.byClient[c] {
		ws = append(ws, w)
	}
	watches.mu.Unlock()
	for _, w := range ws {
		_ = w.Close()
	}
}

// onWatchFrame hands WATCH_STARTED, CACHE_WATCH_EVENT and WATCH_ENDED to
// the connection's watch, in the order they came, on the reader
// goroutine: WATCH_STARTED is queued before it completes the CACHE_WATCH
// call, so the watch's state is set before any of its events.
func (c *conn) onWatchFrame(f wire.Frame) error {
	it := watchItem{typ: f.Type}
	var err error
	switch f.Type {
	case wire.TypeWatchStarted:
		err = wire.DecodeControl(f, c.readLimits, &it.started)
	case wire.TypeWatchEnded:
		err = wire.DecodeControl(f, c.readLimits, &it.ended)
	case wire.TypeCacheWatchEvent:
		f.Body = append([]byte(nil), f.Body...) // the event's own copy
		err = it.ev.Decode(f, c.readLimits)
	}
	if err != nil {
		err = fmt.Errorf("%w: %v: %w", ErrProtocol, f.Type, err)
		if cl := c.take(f.RequestID); cl != nil {
			c.finish(cl, err)
		}
		return err
	}
	if w := watches.of(c); w != nil {
		w.push(c, it)
	}
	if f.Type == wire.TypeWatchStarted {
		if cl := c.take(f.RequestID); cl != nil {
			cl.ftype = f.Type
			c.finish(cl, nil)
		}
	}
	return nil
}

// push queues a received frame for the reader. While the ring is full it
// waits for the reader to take one, so the connection stops reading and
// the broker's queue absorbs the difference (and ends the watch lagged
// when it overflows). It gives up when the watch is closed or its
// connection dies.
func (w *Watch) push(c *conn, it watchItem) {
	for {
		w.mu.Lock()
		if w.closed {
			w.mu.Unlock()
			return
		}
		if w.n < len(w.items) {
			w.items[(w.head+w.n)%len(w.items)] = it
			w.n++
			w.mu.Unlock()
			w.wake()
			return
		}
		if w.room == nil {
			w.room = make(chan struct{})
		}
		room := w.room
		w.mu.Unlock()
		if !c.waitForReader(room) {
			return
		}
	}
}
