package peer

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// TCP is the Transport over TCP: a link per peer, dialled on first use,
// and a listener serving the peers that dial this broker. See the
// package doc for its goroutines and locks.
type TCP struct {
	cfg     Config
	me      speaks
	lim     wire.Limits // what this broker reads: Config.FrameBytesMax
	bufMax  int         // a link's write buffer bound
	handler handlerSlot
	srv     *server
	pool    waiterPool

	ctx    context.Context // ended by Close: dials in progress give up
	cancel context.CancelFunc
	done   chan struct{} // closed by Close: the sweeper stops

	mu     sync.RWMutex // guards links, closed
	links  map[string]*link
	closed bool

	wg sync.WaitGroup // dialers, readers, flushers, the sweeper (the listener has its own)
}

var _ Transport = (*TCP)(nil)

// Listen starts a TCP transport: its peer listener is bound and serving
// (with Config.Handler) when Listen returns.
func Listen(cfg Config) (*TCP, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	me := cfg.speaks()
	t := &TCP{cfg: cfg, me: me, lim: wire.Limits{FrameBytesMax: me.frameBytesMax},
		bufMax: me.frameBytesMax + writeBufSlackBytes, links: map[string]*link{}, done: make(chan struct{})}
	t.ctx, t.cancel = context.WithCancel(context.Background())
	t.handler.set(cfg.Handler)
	t.srv = newServer(t)
	if err := t.srv.start(); err != nil {
		t.cancel()
		return nil, err
	}
	t.wg.Add(1)
	go t.sweeper()
	return t, nil
}

// writeBufSlackBytes is what a link's write buffer holds beyond one frame
// of the largest size: requests gather there while a write is under way,
// or while the link dials; past it Send is ErrBusy and Call waits.
const writeBufSlackBytes = 4 << 20

// ID is this broker's id.
func (t *TCP) ID() string { return t.cfg.ID }

// Addr is the address the peer listener is bound to.
func (t *TCP) Addr() net.Addr { return t.srv.addr }

// Handle sets the handler of peers' requests.
func (t *TCP) Handle(h Handler) { t.handler.set(h) }

// Send starts c; see Transport.
func (t *TCP) Send(c *Call) error {
	_, err := t.start(context.Background(), c, false)
	return err
}

// Call sends req and waits for the answer; see Transport.
func (t *TCP) Call(ctx context.Context, to string, req, dst []byte) (wire.Frame, error) {
	return callSync(ctx, t, to, req, dst)
}

// start queues c on its link: without waiting (Send), or waiting within
// ctx for a slot and for room in the write buffer (Call, which then writes
// itself when no write is under way).
func (t *TCP) start(ctx context.Context, c *Call, wait bool) (*core, error) {
	l, err := t.link(c.To)
	if err != nil {
		return nil, err
	}
	if err := checkFrame(c.Request, t.lim); err != nil {
		return nil, notSent(c.To, err)
	}
	if err := l.core.acquire(ctx, wait); err != nil {
		return nil, err
	}
	if err := l.enqueue(ctx, c, wait); err != nil {
		return nil, err
	}
	return &l.core, nil
}

func (t *TCP) waiters() *waiterPool { return &t.pool }

// link is the link to broker `to`, made on first use.
func (t *TCP) link(to string) (*link, error) {
	t.mu.RLock()
	l, closed := t.links[to], t.closed
	t.mu.RUnlock()
	switch {
	case closed:
		return nil, notSent(to, ErrClosed)
	case l != nil:
		return l, nil
	case to == "" || len(to) > wire.DefaultNameBytesMax:
		return nil, notSent(to, wrap(ErrUnreachable, errBrokerID))
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, notSent(to, ErrClosed)
	}
	if l = t.links[to]; l == nil {
		l = newLink(t, to)
		t.links[to] = l
	}
	return l, nil
}

var errBrokerID = errors.New("a broker id is 1 to 255 bytes")

// snapshot appends every link to out.
func (t *TCP) snapshot(out []*link) []*link {
	t.mu.RLock()
	for _, l := range t.links {
		out = append(out, l)
	}
	t.mu.RUnlock()
	return out
}

// sweeper fails requests past their Timeout, every TimeoutTick.
func (t *TCP) sweeper() {
	defer t.wg.Done()
	tick := time.NewTicker(t.cfg.TimeoutTick)
	defer tick.Stop()
	var links []*link
	var scratch []*Call
	for {
		select {
		case <-t.done:
			return
		case <-tick.C:
		}
		now := time.Now()
		links = t.snapshot(links[:0])
		for _, l := range links {
			scratch = l.core.sweep(now, scratch)
		}
		clear(links)
	}
}

// Close fails every request in flight, stops the listener and waits for
// the transport's goroutines.
func (t *TCP) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	t.mu.Unlock()
	t.cancel()
	close(t.done)
	t.srv.stop()
	for _, l := range t.snapshot(nil) {
		l.close()
	}
	t.wg.Wait()
	return nil
}

// handlerSlot holds the Handler; read on every request, so atomically.
type handlerSlot struct{ p atomic.Pointer[handlerBox] }

type handlerBox struct{ h Handler }

func (s *handlerSlot) set(h Handler) {
	if h == nil {
		s.p.Store(nil)
		return
	}
	s.p.Store(&handlerBox{h: h})
}

func (s *handlerSlot) get() Handler {
	if b := s.p.Load(); b != nil {
		return b.h
	}
	return nil
}

// Retry ends the backoff of the link to peer, if it is backing off after
// a failed dial: the next request dials at once. The caller knows
// something the link does not: the control plane saw the peer register
// again (it restarted), at the same address or another. Safe from any
// goroutine; it never blocks.
func (t *TCP) Retry(peer string) {
	t.mu.RLock()
	l := t.links[peer]
	t.mu.RUnlock()
	if l == nil {
		return
	}
	l.core.mu.Lock()
	if l.state == linkWaiting {
		l.state, l.attempt = linkIdle, 0
	}
	l.core.mu.Unlock()
}
