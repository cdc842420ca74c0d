package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// conn is one session with the broker: a socket after a successful
// handshake, the requests awaiting answers on it, and the subscriptions it
// carries. It dies once (die); a Client then dials a new one.
//
// Goroutines: readLoop (the only reader of the socket, and the only
// completer of calls apart from die), the writer's flusher, and pingLoop.
type conn struct {
	opts       *options
	ids        *atomic.Uint64 // the client's request ids: never reused
	nc         net.Conn
	brokerID   string
	features   wire.Features // negotiated
	limits     wire.Limits   // the broker's: what the client may send
	readLimits wire.Limits   // what the client accepts
	inflight   chan struct{} // a slot per request awaiting an answer
	w          *writer
	lastRead   atomic.Int64 // unix ns of the last bytes read
	// readerWaits: the reader is waiting for a subscriber to make room, so
	// the silence that follows is the client's, not the broker's.
	readerWaits atomic.Bool

	// mu guards the fields below. Lock order: Subscription.mu, then mu.
	mu        sync.Mutex
	calls     map[uint64]*call
	subs      map[uint64]*Subscription
	err       error         // why the connection died; set once
	brokerErr *ServerError  // an ERROR the broker sent with request id 0
	dead      chan struct{} // closed when err is set
}

func newConn(nc net.Conn, o *options, ids *atomic.Uint64, ok wire.HelloOK) *conn {
	c := &conn{
		opts: o, ids: ids, nc: nc, brokerID: string(ok.BrokerID),
		features: ok.Features, limits: ok.Limits.Effective(),
		readLimits: capLimits(ok.Limits.Effective(), o.limits),
		calls:      map[uint64]*call{}, subs: map[uint64]*Subscription{},
		dead: make(chan struct{}),
	}
	slots := o.inflightMax
	if slots <= 0 {
		slots = DefaultInflightMax
	}
	if ok.InflightRequestsMax > 0 {
		slots = min(slots, int(ok.InflightRequestsMax))
	}
	c.inflight = make(chan struct{}, slots)
	bufMax := max(defaultWriteBufBytes, c.limits.FrameBytesMax)
	c.w = newWriter(nc, o.writeTimeout, bufMax, func(err error) { c.die(fmt.Errorf("%w: write: %w", ErrConnectionLost, err)) })
	c.lastRead.Store(time.Now().UnixNano())
	return c
}

// capLimits is the broker's limits, each lowered to the client's own where
// the client set one.
func capLimits(broker, own wire.Limits) wire.Limits {
	lower := func(b, o int) int {
		if o > 0 && o < b {
			return o
		}
		return b
	}
	return wire.Limits{
		FrameBytesMax:   lower(broker.FrameBytesMax, own.FrameBytesMax),
		BatchRecordsMax: lower(broker.BatchRecordsMax, own.BatchRecordsMax),
		KeyBytesMax:     lower(broker.KeyBytesMax, own.KeyBytesMax),
		NameBytesMax:    lower(broker.NameBytesMax, own.NameBytesMax),
		TokenBytesMax:   lower(broker.TokenBytesMax, own.TokenBytesMax),
	}
}

func (c *conn) pingInterval(ok wire.HelloOK) time.Duration {
	iv := c.opts.pingInterval
	if iv <= 0 {
		return 0
	}
	if idle := time.Duration(ok.IdleTimeoutMillis) * time.Millisecond; idle > 0 {
		iv = min(iv, idle/3)
	}
	return iv
}

// alive reports whether the connection can still carry requests.
func (c *conn) alive() bool {
	select {
	case <-c.dead:
		return false
	default:
		return true
	}
}

// die ends the connection once: later sends fail with err, every call
// awaiting an answer fails with it, every subscription ends.
func (c *conn) die(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	if c.brokerErr != nil && !errors.Is(err, ErrClosed) {
		err = fmt.Errorf("%w (the broker said: %w)", err, c.brokerErr)
	}
	c.err = err
	calls, subs := c.calls, c.subs
	c.calls, c.subs = map[uint64]*call{}, map[uint64]*Subscription{}
	close(c.dead)
	c.mu.Unlock()
	c.w.fail(err)
	_ = c.nc.Close()
	for _, cl := range calls {
		c.finish(cl, err)
	}
	for _, s := range subs {
		s.lost(err)
	}
	c.opts.logger.Debug("felix client connection closed", "broker", c.brokerID, "err", err)
}

// register adds cl to the calls awaiting answers, unless the connection
// died.
func (c *conn) register(cl *call) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.err
	}
	c.calls[cl.id] = cl
	return nil
}

// unregister removes cl if it is still there (its frame was never sent)
// and reports whether it was.
func (c *conn) unregister(cl *call) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.calls[cl.id] != cl {
		return false
	}
	delete(c.calls, cl.id)
	return true
}

// take removes and returns the call answered by id, or nil.
func (c *conn) take(id uint64) *call {
	c.mu.Lock()
	defer c.mu.Unlock()
	cl := c.calls[id]
	if cl != nil {
		delete(c.calls, id)
	}
	return cl
}

// finish frees the call's slot and completes it.
func (c *conn) finish(cl *call, err error) {
	<-c.inflight
	cl.complete(err)
}

// acquire takes an in-flight slot within ctx.
func (c *conn) acquire(ctx context.Context) error {
	select {
	case c.inflight <- struct{}{}:
		return nil
	default:
	}
	select {
	case c.inflight <- struct{}{}:
		return nil
	case <-ctx.Done():
		return notSent(ctx.Err())
	case <-c.dead:
		return c.deathErr()
	}
}

func (c *conn) deathErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// beginRequest takes an in-flight slot for cl, registers it under a fresh
// request id (before its frame exists, so the answer cannot overtake it)
// and returns the locked write buffer to append the frame to. The caller
// ends with c.w.commit, or c.w.abort and c.drop.
func (c *conn) beginRequest(ctx context.Context, cl *call) ([]byte, error) {
	if err := c.acquire(ctx); err != nil {
		return nil, err
	}
	cl.id = c.ids.Add(1)
	if err := c.register(cl); err != nil {
		<-c.inflight
		return nil, err
	}
	buf, err := c.w.begin(ctx)
	if err != nil {
		c.drop(cl)
		return nil, c.sendErr(err)
	}
	return buf, nil
}

// drop takes back a registered call whose frame was never sent. If the
// connection died meanwhile, die completes it: drop takes that signal so a
// pooled call is clean for reuse.
func (c *conn) drop(cl *call) {
	if c.unregister(cl) {
		<-c.inflight
		return
	}
	if cl.future == nil {
		<-cl.done
	}
}

// sendErr is the error of a send the writer refused.
func (c *conn) sendErr(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if de := c.deathErr(); de != nil {
		return de
	}
	return fmt.Errorf("%w: %w", ErrConnectionLost, err)
}

// control sends a JSON control request and waits for its answer, which
// lands in cl (ftype, body) or cl.err.
func (c *conn) control(ctx context.Context, m wire.Control, cl *call) error {
	buf, err := c.beginRequest(ctx, cl)
	if err != nil {
		return err
	}
	start := len(buf)
	buf = wire.AppendControl(buf, cl.id, m)
	if err := c.limits.CheckFrameSize(len(buf) - start); err != nil {
		c.w.abort(buf[:start])
		c.drop(cl)
		return localError(err)
	}
	c.w.commit(buf)
	_, err = cl.wait(ctx)
	return err
}

// notify sends a frame that expects no answer the client waits for (a
// ping, a pong). It neither waits for room in the write buffer nor writes
// itself: the reader goroutine sends these, and must not wait on a broker
// that may itself be waiting for the client to read.
func (c *conn) notify(enc func(dst []byte, id uint64) []byte) {
	buf, err := c.w.beginNow()
	if err != nil {
		return // the connection is dying; nothing to tell
	}
	c.w.commitAsync(enc(buf, c.ids.Add(1)))
}
