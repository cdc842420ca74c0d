package netio

import (
	"sync/atomic"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// Metrics are the server's counters: plain atomics, written on the hot
// path and read by whoever exports them. Safe for concurrent use; the zero
// value is ready.
type Metrics struct {
	ConnectionsOpened atomic.Uint64
	ConnectionsClosed atomic.Uint64
	ConnectionsActive atomic.Int64
	// HandshakesFailed counts connections refused at HELLO (bad version,
	// token, or a frame before it) and those that timed out before it.
	HandshakesFailed atomic.Uint64
	// AuthRefused counts credentials that did not verify: a HELLO's token
	// (bad signature, untrusted key, expired, malformed) and a forwarded
	// request's, at the owner. Each is logged too (throttled).
	AuthRefused  atomic.Uint64
	IdleTimeouts atomic.Uint64
	// FramesRefused counts frames answered with ERROR and a close
	// (malformed, oversized, unknown type).
	FramesRefused atomic.Uint64
	// AnswersUnread counts connections closed because their answers piled
	// up past twice the outbound budget: a client that sends and never
	// reads.
	AnswersUnread atomic.Uint64
	// ConnectionsRefused counts connections refused at accept because
	// Config.ConnectionsMax were open.
	ConnectionsRefused atomic.Uint64
	// ConnectionsShed counts connections closed because their unfinished
	// frame would have taken the unfinished frames of every connection
	// past Config.InboundBytesMax.
	ConnectionsShed atomic.Uint64
	// FrameTimeouts counts connections closed because a frame did not
	// arrive whole within Config.FrameTimeout.
	FrameTimeouts atomic.Uint64
	// InboundBuffered is the bytes unfinished frames hold, all
	// connections together (at most Config.InboundBytesMax).
	InboundBuffered atomic.Int64

	BytesIn  atomic.Uint64
	BytesOut atomic.Uint64

	PublishRecords atomic.Uint64
	// PublishJSON counts PUBLISH_JSON frames: the fallback encoding a keyed
	// publish takes when the session lacks FeaturePublishKeyed.
	PublishJSON atomic.Uint64
	// PublishKeyedBinary counts binary publish frames with FlagKeyed.
	PublishKeyedBinary atomic.Uint64

	// CacheReadsParked is the reads of Quorum caches parked for a write to
	// reach a majority, and reserved to be (at most cacheParkedMax).
	CacheReadsParked atomic.Int64
	// CacheReadsParkRefused counts reads refused overloaded because the
	// server or their connection parked its most.
	CacheReadsParkRefused atomic.Uint64

	SubscriptionsActive atomic.Int64
	// SubscriberDrops counts records subscriptions dropped (overflow policy
	// or retention): each is a gap in some subscriber's offsets.
	SubscriberDrops atomic.Uint64
	// OutboundBuffered is the bytes all connections hold for their sockets
	// (their budgets' use, summed).
	OutboundBuffered atomic.Int64

	// RelayConnsOpened and RelayConnsActive count the relay connections
	// (relay.go: the connections forwarded requests are served on, one
	// per peer broker and credential); they are not among the
	// connections above. RelayRequests counts the forwarded requests
	// served on them; RelayRefused those refused before any was (not a
	// FORWARD, a frame type not forwarded, a credential refused at the
	// relay's HELLO, no room).
	RelayConnsOpened atomic.Uint64
	RelayConnsActive atomic.Int64
	RelayRequests    atomic.Uint64
	RelayRefused     atomic.Uint64

	// ObserveAck, when set before the server starts, is told how long each
	// acknowledged publish request took from its decoding to its answer
	// being queued for the socket: the broker's share of ack latency, for
	// a histogram. It runs on a log committer or an event loop and must
	// not block. nil: not measured (and the clock not read).
	ObserveAck func(time.Duration)

	// publish counts publish requests by result: index 0 is success,
	// then one counter per wire code in wire.Codes order.
	publish [publishResultSlots]atomic.Uint64
}

// publishResultSlots is room for success and every wire code, with space
// for codes a later version adds.
const publishResultSlots = 64

// codeSlot maps a wire code to its publish counter.
var codeSlot = func() map[wire.Code]int {
	if len(wire.Codes())+1 > publishResultSlots {
		panic("felix/netio: more wire codes than publish result counters; raise publishResultSlots")
	}
	m := map[wire.Code]int{}
	for i, c := range wire.Codes() {
		m[c] = i + 1
	}
	return m
}()

// countPublish counts one publish request's result: code 0 is success.
func (m *Metrics) countPublish(code wire.Code) {
	i, ok := codeSlot[code]
	if !ok && code != 0 {
		i = codeSlot[wire.CodeInternal]
	}
	m.publish[i].Add(1)
}

// PublishResult is the number of publish requests that ended with code
// (0: acknowledged, or accepted with ack none).
func (m *Metrics) PublishResult(code wire.Code) uint64 {
	if code == 0 {
		return m.publish[0].Load()
	}
	if i, ok := codeSlot[code]; ok {
		return m.publish[i].Load()
	}
	return 0
}

// EachPublishResult calls fn for every result with a non-zero count.
func (m *Metrics) EachPublishResult(fn func(code wire.Code, n uint64)) {
	if n := m.publish[0].Load(); n > 0 {
		fn(0, n)
	}
	for i, c := range wire.Codes() {
		if n := m.publish[i+1].Load(); n > 0 {
			fn(c, n)
		}
	}
}
