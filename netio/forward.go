package netio

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/felixbroker/felix/cluster/peer"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/netio/wire"
)

// Router names the broker that leads a shard this broker does not lead:
// the peer a request for that shard is forwarded to. The cluster's view of
// the leases supplies it.
type Router interface {
	// LeaderBroker is the broker id of the shard's leader, and false when
	// none is known. A cache's shards are asked under
	// cache.ID.OwnershipID().
	LeaderBroker(id engine.StreamID, shard int) (broker string, ok bool)
}

// ForwarderConfig configures a Forwarder. Peers and Router are required.
type ForwarderConfig struct {
	// Peers is this broker's end of the peer transport.
	Peers peer.Transport
	// Router names the leader of each shard.
	Router Router
	// Limits are the client protocol's limits in force (Config.Limits):
	// the answers are read under them. Default wire's.
	Limits wire.Limits
	// Timeout bounds the wait for a leader's answer; past it the request
	// fails with timeout (it may have been applied). Default
	// DefaultForwardTimeout.
	Timeout time.Duration
	// Metrics, when set, counts what was forwarded and how it ended.
	Metrics *ForwardMetrics
}

// DefaultForwardTimeout is ForwarderConfig.Timeout's default: a leader's
// fdatasync and a round trip take milliseconds; this is for a leader that
// stopped answering.
const DefaultForwardTimeout = 10 * time.Second

// ErrForwarderConfig is NewForwarder's refusal of a config without Peers
// or Router.
var ErrForwarderConfig = errors.New("felix/netio: ForwarderConfig needs Peers and Router")

// ForwardMetrics count a Forwarder's requests. Safe for concurrent use;
// the zero value is ready.
type ForwardMetrics struct {
	// Sent counts requests handed to the peer transport.
	Sent atomic.Uint64
	// Answered counts the leaders' answers, ERRORs included; Refused the
	// ERRORs among them.
	Answered atomic.Uint64
	Refused  atomic.Uint64
	// Failed counts requests sent that got no answer (timeout, the
	// connection lost): each may have been applied.
	Failed atomic.Uint64
	// NotSent counts requests the transport refused before sending
	// (unreachable, busy, closed); NoLeader those whose shard had no
	// leader known.
	NotSent  atomic.Uint64
	NoLeader atomic.Uint64
}

// Forwarder sends the requests this broker receives for shards another
// broker leads to that broker over the peer transport, each wrapped in a
// FORWARD with the client's credential, and hands back the leader's
// answer. It is the engine's Forwarder (engine.Options.Forward: a
// publish's parts for other brokers' shards), and the cache and counter
// frames' (Config.Forwarder); it is built before both, so it knows neither.
// Safe for concurrent use; a request in steady state allocates nothing
// (pooled calls and buffers).
type Forwarder struct {
	cfg   ForwarderConfig
	calls sync.Pool // *forwardCall
}

var _ engine.Forwarder = (*Forwarder)(nil)

// NewForwarder checks cfg and returns the forwarder.
func NewForwarder(cfg ForwarderConfig) (*Forwarder, error) {
	if cfg.Peers == nil || cfg.Router == nil {
		return nil, ErrForwarderConfig
	}
	cfg.Limits = cfg.Limits.Effective()
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultForwardTimeout
	}
	if cfg.Metrics == nil {
		cfg.Metrics = new(ForwardMetrics)
	}
	f := &Forwarder{cfg: cfg}
	f.calls.New = func() any { return newForwardCall(f) }
	return f, nil
}

// Metrics are the forwarder's counters.
func (f *Forwarder) Metrics() *ForwardMetrics { return f.cfg.Metrics }

// Forward is engine.Forwarder: it encodes recs as a keyed PUBLISH_BATCH
// asking for one ack, wraps it in a FORWARD with cred, and sends it to the
// shard's leader; w is told the offsets the leader's PUBLISH_ACK gives, or
// the leader's ERROR (a *wire.Error, relayed as is), or the transport's
// failure as a wire error. It returns an error, and tells w nothing, when
// nothing was sent: *engine.NotLeaderError when no leader is known, a
// *wire.Error when the transport refused. It never blocks.
func (f *Forwarder) Forward(id engine.StreamID, shard int, recs []engine.Record, cred []byte, w shardlog.Waiter) error {
	broker, ok := f.cfg.Router.LeaderBroker(id, shard)
	if !ok {
		f.cfg.Metrics.NoLeader.Add(1)
		return &engine.NotLeaderError{Stream: id, Shard: shard}
	}
	if len(recs) == 0 {
		return engine.ErrEmptyPublish
	}
	if len(cred) > credentialBytesMax {
		return errCredentialTooLong
	}
	fc := f.calls.Get().(*forwardCall)
	fc.w, fc.shard, fc.count = w, shard, len(recs)
	fc.buf = appendForwardedPublish(fc.buf[:0], id, recs, cred)
	return f.send(fc, broker, id, shard)
}

// credentialBytesMax is the longest credential a FORWARD carries (its u16
// length).
const credentialBytesMax = 1<<16 - 1

// errCredentialTooLong refuses a credential the FORWARD's u16 length
// cannot carry; a connection's token was bounded at HELLO far below it.
var errCredentialTooLong = &wire.Error{Code: wire.CodeLimitExceeded, Message: "a credential too long to forward",
	Details: wire.Details{Limit: wire.LimitTokenBytes}}

// send starts fc's request to broker; on a refusal it takes fc back and
// returns the refusal as a wire error.
func (f *Forwarder) send(fc *forwardCall, broker string, id engine.StreamID, shard int) error {
	fc.broker, fc.id = broker, id
	fc.call.To, fc.call.Request, fc.call.Timeout = broker, fc.buf, f.cfg.Timeout
	if err := f.cfg.Peers.Send(&fc.call); err != nil {
		f.put(fc)
		f.cfg.Metrics.NotSent.Add(1)
		return notSentError(err, broker, id, shard)
	}
	f.cfg.Metrics.Sent.Add(1)
	return nil // fc is the transport's until Done
}

// put pools fc, keeping its buffer unless a large request grew it.
func (f *Forwarder) put(fc *forwardCall) {
	if cap(fc.buf) > forwardKeepBytes {
		fc.buf = nil
	}
	fc.w, fc.fw, fc.id, fc.broker = nil, nil, engine.StreamID{}, ""
	fc.call.Request = nil
	f.calls.Put(fc)
}

// forwardKeepBytes is the largest request buffer a pooled call keeps.
const forwardKeepBytes = 256 << 10
