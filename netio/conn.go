package netio

import (
	"sync"
	"sync/atomic"

	"github.com/panjf2000/gnet/v2"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/netio/wire"
)

// conn is one client connection. The fields under "loop" are touched only
// by the connection's event loop; the rest say who guards them.
type conn struct {
	s        *Server
	gc       transport // AsyncWrite, Close and EventLoop are safe from any goroutine
	out      *outbox
	remote   string
	openedAt int64 // the server's coarse clock at OnOpen

	lastActive atomic.Int64 // coarse clock at the last bytes received; read by the sweep
	helloDone  atomic.Bool  // HELLO answered; read by the sweep
	expired    atomic.Bool  // a timeout fired: the close is on its way
	features   atomic.Uint64
	jsonPubs   atomic.Uint64
	binaryPubs atomic.Uint64

	// relayed: the connection serves requests other brokers forward
	// (relay.go), never a client's own; set before its HELLO.
	relayed bool

	// loop
	refusing  bool // a fatal error was answered: ignore everything until the close
	principal Principal
	auth      connAuth // the credential behind principal (authn.go)
	reader    wire.Reader
	part      unfinished // the frame still arriving (inbound.go)
	pub       wire.Publish
	recs      []engine.Record
	wakes     engine.WakeList // committers to wake once the read is handled
	streams   streamCache
	lastSubID uint64

	subMu      sync.Mutex // guards subs, ending, clientName
	subs       map[uint64]*deliverer
	ending     error // set once the connection's subscriptions must end
	clientName string
	watches    connWatches // cache watches (watch.go), under their own lock
	groups     connGroups  // consumer groups (group.go): names, waiting polls
}

func newConn(s *Server, gc transport) *conn {
	c := &conn{s: s, gc: gc, principal: AllowAll{}, subs: map[uint64]*deliverer{}}
	c.out = newOutbox(gc, s.cfg.OutboundBytesMax, s.cfg.Limits.FrameBytesMax, s.cfg.Metrics)
	c.reader = wire.Reader{Limits: s.cfg.Limits}
	if a := gc.RemoteAddr(); a != nil {
		c.remote = a.String()
	}
	c.openedAt = s.clock.Load()
	c.lastActive.Store(c.openedAt)
	return c
}

// flushHereBytes is the most a socket read's publishes may queue in a
// shard log for the loop to write them itself (see "Answering a read in
// its own write" in doc.go): a synchronous publisher's request, or a few,
// always; a pipelined client's full read goes to the committer, which
// writes it while the loop reads on.
const flushHereBytes = 16 << 10

// traffic is OnTraffic: decode every whole frame the transport holds and
// handle it (inbound.go), then write the answers in one go. Only whole
// frames are activity for the idle timeout.
func (c *conn) traffic() gnet.Action {
	c.out.beginTraffic()
	if c.readFrames() {
		c.lastActive.Store(c.s.clock.Load())
	}
	c.wakes.FlushHere(flushHereBytes)
	c.out.flushOnLoop()
	c.wakes.Wake()
	return gnet.None
}

// handle dispatches one frame.
func (c *conn) handle(f wire.Frame) {
	if !c.helloDone.Load() {
		c.handshake(f)
		return
	}
	features := wire.Features(c.features.Load())
	if need := wire.RequiredFeatures(f.Type, f.Flags); !features.Has(need) {
		c.answer(f.RequestID, &wire.Error{Code: wire.CodeFeatureNotNegotiated,
			Message: f.Type.String() + " needs features the session did not negotiate",
			Details: wire.Details{Feature: need &^ features}})
		return
	}
	switch f.Type {
	case wire.TypePing:
		c.ping(f)
	case wire.TypePong:
	case wire.TypeHello:
		c.answer(f.RequestID, &wire.Error{Code: wire.CodeInvalidArgument, Message: "HELLO after the handshake"})
	case wire.TypePublish, wire.TypePublishBatch, wire.TypePublishJSON:
		c.publish(f)
	case wire.TypeSubscribe:
		c.subscribe(f)
	case wire.TypeUnsubscribe:
		c.unsubscribe(f)
	case wire.TypeStreamCreate, wire.TypeStreamDelete, wire.TypeStreamDescribe, wire.TypeStreamList:
		c.streamAdmin(f)
	case wire.TypeBrokerList:
		c.brokerList(f)
	default:
		if h := frameHandlers[f.Type]; h != nil {
			h(c, f)
			return
		}
		c.unhandled(f)
	}
}

// frameHandlers holds the handlers of optional features (cache, counters,
// groups, idempotent producers): each feature's file registers its frame
// types in an init func, so features are added without touching this
// dispatch. A handler runs on the event loop and must not block.
var frameHandlers = map[wire.Type]func(*conn, wire.Frame){}

// unhandled answers a frame no handler takes: one only brokers send is a
// broken peer; a client frame of a feature this broker does not serve yet
// (it never advertises one) is refused as not negotiated.
func (c *conn) unhandled(f wire.Frame) {
	if brokerOnly(f.Type) {
		c.refuse(f.RequestID, &wire.Error{Code: wire.CodeMalformedFrame, Message: f.Type.String() + " is sent by brokers only"})
		return
	}
	c.answer(f.RequestID, &wire.Error{Code: wire.CodeFeatureNotNegotiated,
		Message: f.Type.String() + " is not served by this broker",
		Details: wire.Details{Feature: wire.RequiredFeatures(f.Type, f.Flags)}})
}

func brokerOnly(t wire.Type) bool {
	switch t {
	case wire.TypeHelloOK, wire.TypeOK, wire.TypeError, wire.TypeBrokerListResult,
		wire.TypePublishAck, wire.TypePublishIdempotentAck, wire.TypeProducerInitOK,
		wire.TypeSubscribed, wire.TypeSubscriptionEnded, wire.TypeEventBatch, wire.TypeSubscriptionAtEnd,
		wire.TypeStreamInfo, wire.TypeStreamListResult,
		wire.TypeCacheValue, wire.TypeCacheWritten, wire.TypeWatchStarted, wire.TypeCacheWatchEvent, wire.TypeCacheInfo,
		wire.TypeWatchEnded, wire.TypeCounterValue, wire.TypeGroupRecords, wire.TypeGroupResult,
		wire.TypeGroupInfo, wire.TypeGroupListResult, wire.TypeGroupDeadLettersResult, wire.TypeGroupRedriveResult,
		wire.TypeForward:
		return true
	}
	return wire.PeerOnly(t) && t != wire.TypePeerHello
}

// answer sends ERROR for a request; one that leaves the byte stream
// untrustworthy also closes the connection.
func (c *conn) answer(requestID uint64, e *wire.Error) {
	if fatal(e.Code) {
		c.refuse(requestID, e)
		return
	}
	c.sendError(requestID, e)
}

// refuse answers with ERROR, stops reading and closes the connection once
// the answer is written. Loop only.
func (c *conn) refuse(requestID uint64, e *wire.Error) {
	c.refusing = true
	c.s.cfg.Metrics.FramesRefused.Add(1)
	c.sendError(requestID, e)
	c.out.closeAfterFlush()
}

func (c *conn) sendError(requestID uint64, e *wire.Error) {
	b := c.out.begin()
	c.out.commit(wire.AppendError(b, requestID, e))
}

// sendControl sends a JSON control frame.
func (c *conn) sendControl(requestID uint64, m wire.Control) {
	b := c.out.begin()
	c.out.commit(wire.AppendControl(b, requestID, m))
}

func (c *conn) sendOK(requestID uint64) {
	b := c.out.begin()
	c.out.commit(wire.AppendOK(b, requestID))
}

func (c *conn) ping(f wire.Frame) {
	var p wire.Ping
	if err := p.Decode(f, c.s.cfg.Limits); err != nil {
		c.answer(f.RequestID, toWire(err))
		return
	}
	b := c.out.begin()
	c.out.commit(wire.AppendPong(b, f.RequestID, p.Payload))
}

func (c *conn) brokerList(f wire.Frame) {
	var m wire.BrokerList
	if err := wire.DecodeControl(f, c.s.cfg.Limits, &m); err != nil {
		c.answer(f.RequestID, toWire(err))
		return
	}
	brokers := []wire.BrokerInfo{{ID: c.s.cfg.BrokerID, Addr: c.s.advAddr}}
	if list := c.s.cfg.Brokers; list != nil {
		brokers = list()
	}
	c.sendControl(f.RequestID, &wire.BrokerListResult{Brokers: brokers})
}

// closed is OnClose: drop what waits for the socket and end the
// subscriptions without a word.
func (c *conn) closed() {
	c.out.markClosed()
	c.dropUnfinished()
	c.endSubscriptions(errConnClosed)
	c.endWatches(errConnClosed)
	c.endGroups(errConnClosed)
}

func (c *conn) info() ConnInfo {
	c.subMu.Lock()
	name, subs := c.clientName, len(c.subs)
	c.subMu.Unlock()
	return ConnInfo{
		Remote: c.remote, ClientName: name, Features: wire.Features(c.features.Load()),
		PublishJSON: c.jsonPubs.Load(), PublishBinary: c.binaryPubs.Load(), Subscriptions: subs,
		OutboundBytes: c.out.used(), OutboundPeak: c.out.peak.Load(),
	}
}
