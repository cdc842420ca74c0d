package netio

import (
	"math"
	"sync/atomic"

	"github.com/felixbroker/felix/cluster/peer"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/netio/wire"
)

// Relay connections: the owner's side of forwarding. A FORWARD from a peer
// broker is served by a relay connection, a conn like a client's (the same
// frame handling, authorization, quotas and answers) over a
// relayTransport instead of a socket, one per (peer broker, credential).
// It begins with a HELLO the relay makes up, carrying the credential as
// its token, so this broker's Authenticator verifies the credential itself
// and the principal it yields governs every request relayed on it: the
// ingress broker's verdict is never taken. A credential refused at HELLO
// refuses the request that brought it, and no connection is kept.

// relayFeatures are what a relay connection's HELLO asks for: the frames
// a FORWARD may carry.
const relayFeatures = wire.FeatureBinaryPublish | wire.FeaturePublishKeyed | wire.FeatureCache | wire.FeatureCounters

var _ peer.Handler = (*Server)(nil)

// ServePeer is the server's peer.Handler: it serves FORWARD, and answers
// every other peer request invalid_argument (replication adds its own
// frames). A FORWARD's inner request must be a publish asking for ack
// per batch, or a cache get, put or delete, or a counter add or get:
// anything else (a subscribe, which its ingress must redirect, never
// relay) is invalid_argument. It runs on a transport goroutine and does
// not block, but for the engine's own backpressure on a publish, as a
// client's event loop.
func (s *Server) ServePeer(from string, req wire.Frame, r peer.Reply) {
	m, e := s.relayRequest(req)
	if e != nil {
		s.cfg.Metrics.RelayRefused.Add(1)
		answerPeer(r, e)
		return
	}
	for range relayAttempts {
		rc, refusal := s.relayFor(from, m.Credential)
		if refusal != nil {
			s.cfg.Metrics.RelayRefused.Add(1)
			_ = r.Answer(refusal)
			return
		}
		if rc.serve(m.Inner, r) {
			s.cfg.Metrics.RelayRequests.Add(1)
			return
		}
		s.relays.remove(rc) // it closed meanwhile: the next attempt opens another
	}
	answerPeer(r, &wire.Error{Code: wire.CodeOverloaded, Message: "no relay connection would take the request"})
}

// relayAttempts bounds how often ServePeer looks for a relay connection
// that is not closing.
const relayAttempts = 3

// relayRequest decodes a FORWARD and checks what it carries.
func (s *Server) relayRequest(req wire.Frame) (wire.Forward, *wire.Error) {
	var m wire.Forward
	if req.Type != wire.TypeForward {
		return m, &wire.Error{Code: wire.CodeInvalidArgument, Message: req.Type.String() + " is not served to peers; FORWARD is"}
	}
	if err := m.Decode(req, relayLimits(s.cfg.Limits)); err != nil {
		return m, toWire(err)
	}
	switch m.Inner.Type {
	case wire.TypePublish, wire.TypePublishBatch:
		ack, err := wire.PublishAckMode(m.Inner, s.cfg.Limits)
		if err != nil {
			return m, toWire(err)
		}
		if ack != wire.AckPerBatch {
			return m, &wire.Error{Code: wire.CodeInvalidArgument, Details: wire.Details{Field: "ack"},
				Message: "a forwarded publish asks for ack per_batch: one answer"}
		}
	case wire.TypeCacheGet, wire.TypeCachePut, wire.TypeCacheDelete, wire.TypeCounterAdd, wire.TypeCounterGet:
	default:
		return m, &wire.Error{Code: wire.CodeInvalidArgument,
			Message: m.Inner.Type.String() + " is not forwarded (a subscribe, watch or poll is redirected to its leader)"}
	}
	if s.stopping.Load() {
		return m, errShuttingDown
	}
	return m, nil
}

// relayFrameSlackBytes is, with a byte per record of the batch limit, what
// re-encoding a client's publish as a forwarded part may add to its frame:
// the keyed encoding's key length byte for every record (a client's
// unkeyed frame has none), a PUBLISH's batch count. A relay connection
// takes frames this much over the client frame limit, so a publish its
// ingress accepted is never refused for the encoding the ingress chose;
// each record is still held to the client limits.
const relayFrameSlackBytes = 64

// relayLimits are the limits a relay connection reads its frames under.
func relayLimits(l wire.Limits) wire.Limits {
	l = l.Effective()
	l.FrameBytesMax = min(l.FrameBytesMax+l.BatchRecordsMax+relayFrameSlackBytes, math.MaxInt32)
	return l.Effective()
}

func answerPeer(r peer.Reply, e *wire.Error) { _ = r.Answer(wire.AppendError(nil, 0, e)) }

// relayConn is one relay connection: its transport, its conn, and its
// place in the server's set (relay_set.go).
type relayConn struct {
	t        *relayTransport
	c        *conn
	from     string
	cred     string
	lastUsed atomic.Int64 // the server's coarse clock at its last request

	prev, next *relayConn // the set's use order, under relaySet.mu
	listed     bool       // in the set, under relaySet.mu
}

// relayFor finds the relay connection of (from, cred), or opens one: the
// connection, or the ERROR frame that refuses the request (its HELLO was
// refused, the set is full of busy ones, the server is stopping).
func (s *Server) relayFor(from string, cred []byte) (*relayConn, []byte) {
	if rc := s.relays.find(from, cred); rc != nil {
		return rc, nil
	}
	if s.stopping.Load() {
		return nil, wire.AppendError(nil, 0, errShuttingDown)
	}
	rc, refusal := s.openRelay(from, cred)
	if refusal != nil {
		return nil, refusal
	}
	kept, evicted, e := s.relays.insert(rc)
	if evicted != nil {
		_ = evicted.t.Close()
	}
	if kept != rc {
		_ = rc.t.Close()
	}
	if e != nil {
		return nil, wire.AppendError(nil, 0, e)
	}
	return kept, nil
}

// openRelay makes a relay connection and has it handshake: a HELLO
// carrying cred as its token, served as a client's is. It returns the
// connection once HELLO_OK came, or the ERROR that refused it (the
// connection is then closing: a credential is verified again each time).
func (s *Server) openRelay(from string, cred []byte) (*relayConn, []byte) {
	t := newRelayTransport(from, s.cfg.Limits)
	rc := &relayConn{t: t, from: from, cred: string(cred)}
	t.onClose = func() { s.closeRelay(rc) }
	go t.writeLoop()
	t.loop.Lock()
	defer t.loop.Unlock()
	rc.c = newConn(s, t)
	rc.c.relayed = true
	rc.c.reader.Limits = relayLimits(s.cfg.Limits)
	s.cfg.Metrics.RelayConnsOpened.Add(1)
	s.cfg.Metrics.RelayConnsActive.Add(1)
	t.lastID++
	t.helloID = t.lastID
	t.in = wire.AppendHello(t.in[:0], t.helloID, wire.Hello{VersionMin: wire.ProtocolVersionMin, VersionMax: wire.ProtocolVersion,
		Features: relayFeatures, Token: cred, ClientName: []byte(clientNameOf(from))})
	t.rpos = 0
	rc.c.traffic()
	t.drained()
	if !t.greeted {
		_ = t.Close()
		if t.refusal == nil {
			return nil, wire.AppendError(nil, 0, &wire.Error{Code: wire.CodeInternal, Message: "a relay connection's HELLO was not answered"})
		}
		return nil, t.refusal
	}
	rc.lastUsed.Store(s.clock.Load())
	return rc, nil
}

// clientNameOf is a relay connection's client name: the broker it serves.
func clientNameOf(from string) string {
	name := "peer:" + from
	return name[:min(len(name), wire.DefaultNameBytesMax)]
}

// serve hands one forwarded request to the connection: registered under
// a request id of the relay's own, then read and handled as a client's
// frame, on the connection's loop. It reports false, having done nothing,
// when the connection is closing (its token expired, it was refused or
// evicted): the caller opens another.
func (rc *relayConn) serve(inner wire.Frame, r peer.Reply) bool {
	t, c := rc.t, rc.c
	t.loop.Lock()
	defer t.loop.Unlock()
	if c.refusing || c.expired.Load() || t.closingNow() {
		return false
	}
	rc.lastUsed.Store(c.s.clock.Load())
	t.feed(inner, t.register(r))
	c.traffic()
	t.drained()
	return true
}

// closeRelay is a relay connection's end, on its loop (the writer's
// finish): the conn's own close handling, then an answer to every request
// that will get none.
func (s *Server) closeRelay(rc *relayConn) {
	rc.c.closed()
	rc.c.releaseAuth()
	s.relays.remove(rc)
	rc.t.failPending()
	s.cfg.Metrics.RelayConnsActive.Add(-1)
}

// leadsEvery refuses a relayed publish with *engine.NotLeaderError unless
// this broker leads every shard its records go to: a publish another
// broker forwarded here is served here or refused, never forwarded again,
// so routing that disagrees about a shard's leader cannot loop (the
// client gets not_leader naming the leader this broker knows).
func leadsEvery(owner engine.Ownership, st *engine.Stream, recs []engine.Record) error {
	checked := -1
	for i := range recs {
		shard := st.ShardFor(recs[i].Key)
		if shard == checked {
			continue
		}
		if local, leader := owner.Leader(st.ID(), shard); !local {
			return &engine.NotLeaderError{Stream: st.ID(), Shard: shard, Leader: leader}
		}
		checked = shard
	}
	return nil
}
