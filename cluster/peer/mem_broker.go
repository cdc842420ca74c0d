package peer

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// Mem is one broker of a Network: the Transport the in-memory
// implementation gives it.
type Mem struct {
	n       *Network
	me      speaks
	lim     wire.Limits
	handler handlerSlot
	pool    waiterPool

	mu     sync.Mutex // guards links, closed
	links  map[string]*memLink
	closed bool
}

var _ Transport = (*Mem)(nil)

func newMem(n *Network, id string, hook func(*speaks)) *Mem {
	me := speaks{id: id, versionMin: wire.PeerProtocolVersionMin, versionMax: wire.PeerProtocolVersion,
		features: wire.FeaturesAll, frameBytesMax: n.opts.FrameBytesMax, inflightMax: n.opts.InflightMax}
	if hook != nil {
		hook(&me)
	}
	return &Mem{n: n, me: me, lim: wire.Limits{FrameBytesMax: me.frameBytesMax}, links: map[string]*memLink{}}
}

// memLink is one broker's requests to one peer, and that peer's view of
// them as a connection: the session both sides settled and the requests
// the peer has in service. Below core, guarded by core.mu.
type memLink struct {
	from *Mem
	core core
	busy atomic.Int64 // at the peer: requests in service

	epoch uint64  // raised by every reset: messages of an older one are lost
	up    bool    // the handshake is done
	ses   session // the asking broker's view
	srv   session // the peer's view
}

// ID is this broker's id.
func (m *Mem) ID() string { return m.me.id }

// Handle sets the handler of peers' requests.
func (m *Mem) Handle(h Handler) { m.handler.set(h) }

// Send starts c; see Transport.
func (m *Mem) Send(c *Call) error {
	_, err := m.start(context.Background(), c, false)
	return err
}

// Call sends req and waits for the answer; see Transport.
func (m *Mem) Call(ctx context.Context, to string, req, dst []byte) (wire.Frame, error) {
	return callSync(ctx, m, to, req, dst)
}

func (m *Mem) start(ctx context.Context, c *Call, wait bool) (*core, error) {
	l, err := m.link(c.To)
	if err != nil {
		return nil, err
	}
	if err := checkFrame(c.Request, m.lim); err != nil {
		return nil, notSent(c.To, err)
	}
	if err := l.core.acquire(ctx, wait); err != nil {
		return nil, err
	}
	k := &l.core
	k.mu.Lock()
	if err := l.admitLocked(len(c.Request)); err != nil {
		k.mu.Unlock()
		k.release()
		return nil, err
	}
	id := k.addLocked(c, time.Now())
	k.sent = k.seq
	epoch := l.epoch
	k.mu.Unlock()
	m.n.send(l, m.me.id, c.To, false, epoch, c.Request, id)
	return k, nil
}

func (m *Mem) waiters() *waiterPool { return &m.pool }

func (m *Mem) link(to string) (*memLink, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, notSent(to, ErrClosed)
	}
	l := m.links[to]
	if l == nil {
		l = &memLink{from: m}
		l.core.init(to, m.me.inflightMax)
		m.links[to] = l
	}
	return l, nil
}

// admitLocked handshakes on the link's first request (and after a reset),
// and refuses a frame the peer would not accept.
func (l *memLink) admitLocked(size int) error {
	peer := l.core.peer
	if !l.up {
		dst := l.from.n.member(peer)
		if dst == nil {
			return notSent(peer, wrap(ErrUnreachable, errNotMember))
		}
		srv, ok, e := dst.me.accept(l.from.me.hello())
		if e != nil {
			return notSent(peer, wrap(ErrRefused, e))
		}
		ses, err := l.from.me.check(peer, ok)
		if err != nil {
			return notSent(peer, err)
		}
		l.ses, l.srv, l.up = ses, srv, true
	}
	if size > l.ses.frameBytesMax {
		return notSent(peer, wrap(ErrBadFrame, &wire.LimitError{Limit: wire.LimitFrameBytes, Max: l.ses.frameBytesMax, Got: uint64(size)}))
	}
	return nil
}

var errNotMember = &wire.Error{Code: wire.CodeNotFound, Message: "no such broker on the network"}

// served hands a request to dst's handler, unless the link was reset since
// it was sent.
func (l *memLink) served(dst *Mem, e *envelope) {
	l.core.mu.Lock()
	current := e.epoch == l.epoch && l.up
	srv := l.srv
	l.core.mu.Unlock()
	if !current {
		return
	}
	f, _, _ := (&wire.Reader{Limits: dst.lim}).Next(e.frame)
	dispatch(dst.handler.get(), &srv, &l.busy, dst.me.inflightMax, f, Reply{to: l, id: f.RequestID})
}

// answered completes the request an answer answers.
func (l *memLink) answered(e *envelope) {
	f, _, _ := (&wire.Reader{Limits: l.from.lim}).Next(e.frame) // checked when it was sent
	l.core.mu.Lock()
	var c *Call
	if e.epoch == l.epoch {
		c = l.core.takeLocked(f.RequestID)
	}
	l.core.mu.Unlock()
	if c != nil {
		c.Done(c, f, nil)
	}
}

// answer is Reply.Answer: the peer answers this link's request.
func (l *memLink) answer(id uint64, frame []byte) error {
	l.core.mu.Lock()
	limit, epoch, up := l.srv.frameBytesMax, l.epoch, l.up
	l.core.mu.Unlock()
	if !up {
		return ErrClosed
	}
	if err := checkAnswer(frame, limit); err != nil {
		return err
	}
	l.busy.Add(-1)
	l.from.n.send(l, l.core.peer, l.from.me.id, true, epoch, frame, id)
	return nil
}

// reset breaks the link's connection: its requests fail with cause, its
// queued messages are lost, the next request handshakes again.
func (l *memLink) reset(cause error) {
	l.core.mu.Lock()
	l.epoch++
	l.up = false
	l.busy.Store(0)
	list := l.core.drainLocked(nil)
	l.core.mu.Unlock()
	l.core.fail(list, cause)
}

func (m *Mem) resetLink(to string, cause error) {
	m.mu.Lock()
	l := m.links[to]
	m.mu.Unlock()
	if l != nil {
		l.reset(cause)
	}
}

func (m *Mem) appendLinks(out []*memLink) []*memLink {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, l := range m.links {
		out = append(out, l)
	}
	return out
}

// Close takes the broker off the network: its requests fail (ErrClosed),
// and so do the other brokers' requests to it (ErrConnectionLost), as a
// broker that stops does to its connections.
func (m *Mem) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	links := make([]*memLink, 0, len(m.links))
	for _, l := range m.links {
		links = append(links, l)
	}
	m.mu.Unlock()
	for _, l := range links {
		l.reset(ErrClosed)
	}
	for _, o := range m.n.leave(m) {
		o.resetLink(m.me.id, ErrConnectionLost)
	}
	return nil
}
