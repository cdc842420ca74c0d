// Package peer is the inter-broker transport: one broker sends requests
// to another and gets their answers, many in flight per connection and
// matched by request id, and serves the requests other brokers send it.
// Routing forwards client requests over it (a publish for a shard this
// broker does not own); replication will ship its batches over it.
//
// Transport is the interface; TCP (Listen) and Mem (a broker of a Network)
// implement it, and one contract suite (contract_test.go) runs on both. It
// must never block a caller's event loop (Send and Reply.Answer never
// wait), hold a frame it has not bounded, or report a failed request
// without saying whether it may have been applied (ErrNotSent,
// ErrOutcomeUnknown).
//
// # Frames
//
// A peer connection carries the client protocol's frames (netio/wire,
// docs/protocol.md): the same 16-byte header and codec, so a forwarded
// publish is the client's PUBLISH or PUBLISH_BATCH re-encoded under
// FlagKeyed (FLAG_BINARY_PUBLISH_KEYED, 0x0040), and its answer a
// PUBLISH_ACK or an ERROR. The caller encodes a request with any request
// id; the transport writes its own into its copy, and the answer comes
// back under it:
//
//	request id (u64) = sequence on the link (48 bits) << 16 | slot (16 bits)
//
// The slot indexes the link's table of requests in flight (core.go), so an
// answer finds its request without a map; an answer whose id the slot no
// longer holds (its caller gave up, it timed out, or it belongs to a
// connection before) is dropped. Sequences only rise: no id is 0 or
// reused while the link lives.
//
// Only the handshake is the peer's own. The dialing broker's first frame
// is PEER_HELLO (not the client's HELLO: a client is never taken for a
// broker, nor a broker for a client); the listener answers PEER_HELLO_OK
// or ERROR and closes. Both are frozen in netio/wire (peer.go), vectors in
// testdata/wire:
//
//	PEER_HELLO (0x0009), dialer -> listener
//	+---------+---------+----------+-----------------+--------+-----------+
//	| version | version | features | frame_bytes_max | id len | broker id |
//	| min u16 | max u16 | u64      | u32             | u8     | (sender)  |
//	+---------+---------+----------+-----------------+--------+-----------+
//
//	PEER_HELLO_OK (0x000A), listener -> dialer
//	+---------+----------+-----------------+-----------------------+--------+-----------+
//	| version | features | frame_bytes_max | inflight_requests_max | id len | broker id |
//	| u16     | u64 (∩)  | u32             | u32                   | u8     | (its own) |
//	+---------+----------+-----------------+-----------------------+--------+-----------+
//
// The version is the peer protocol's (wire.PeerProtocolVersion), the
// highest both ranges hold; none is unsupported_version. The features are
// client feature bits, the intersection; without wire.PeerFeaturesRequired
// (binary publish and FEATURE_PUBLISH_KEYED) it is feature_not_negotiated.
// The dialer refuses an answer naming another broker than it dialled (a
// stale address), a version outside its range, or features it did not
// offer. A refusal fails the requests waiting for that connection with
// ErrRefused (ErrNotSent), the peer's *wire.Error in the chain. Each side
// then holds frames to the other's frame_bytes_max.
//
// # The caller's side
//
// A Call record is the caller's: Send takes it, the transport holds it in
// a slot until the answer, the Timeout, the connection's failure or Close,
// and gives it back through Done, exactly once. Done runs on a transport
// goroutine and must not block; the answer aliases a read buffer and is
// valid only inside Done. Transport.Call is Send and a wait on a pooled
// record, within ctx. A request allocates nothing in steady state.
//
// Each link (this broker to one peer) bounds its requests in flight
// (Config.InflightMax, tokens taken before a slot, so a Call waits and a
// Send is refused with ErrBusy) and the bytes waiting to be written
// (Config.FrameBytesMax plus writeBufSlackBytes). Frames are checked
// (wire.Reader: length, type, flags, the type's bound, against the peer's
// frame limit) before anything is queued.
//
// # TCP
//
// A link dials on its first request and keeps the connection; requests
// made while it dials gather in its buffer. A failed dial or handshake
// fails them (ErrNotSent) and holds the link in backoff (full jitter,
// BackoffBase doubling to BackoffMax): requests meanwhile fail at once
// with the dial's error, the first after it dials again, unless Resolve
// now names another address than the one that failed (the peer came back
// elsewhere): then the request dials at once. A connection that
// fails (a read or write error, the peer closing, a write past
// WriteTimeout) fails its requests: ErrOutcomeUnknown for those whose
// frames were handed to the socket, ErrNotSent for those still in the
// buffer. The next request redials. Nothing is ever resent.
//
// Writes batch like the Go client's (client/writer.go): requests append
// their frames to the link's buffer while one write is under way, and the
// next write takes them all. The caller that finds no write under way
// writes itself, with no hand-off: a Call waits for the socket (at most
// WriteTimeout); a Send alone in flight on its link, or one of a large
// frame (directFrameBytesMin), writes once without waiting (a non-blocking
// write on the socket's descriptor, so an event loop can Send), and what
// the socket does not take, like what gathers during a caller's write, is
// the flusher's, which writes it waiting. A small Send among others in
// flight leaves its frame to the flusher, whose writes gather them. A Send's write that fails is left to
// the flusher too, which fails the connection: no Done runs inside Send.
// A write the socket took only part of counts as sent up to its last
// whole frame. Two buffers alternate, kept up to spareKeepBytes.
//
// The listener is a net.Listener on Config.Addr with, per connection, a
// reader goroutine and a writer goroutine (tcp_server.go): a broker has
// few peers, and a goroutine parked on Go's netpoller holds no processor
// while it waits, where a gnet loop holds one in epoll_wait (the cost is
// measured in docs/benchmarks.md, "Forwarding"). A frame that arrived
// whole in one read is handled where it lies in the read buffer; the
// start of one still arriving stays at the buffer's head, and the buffer
// grows for a larger frame only as its bytes arrive and only after the
// frame's header was checked (its size against FrameBytesMax, PEER_HELLO
// first). The Handler runs on the reader and must not block; answers
// given while it handles a read leave in one write at its end, those
// given later from other goroutines straight to the socket from the
// answering goroutine when nothing else is on its way (a non-blocking
// write), else they gather for the write under way; what a full socket
// leaves is the writer's. A peer that does not read its answers is closed
// once they pass answerBacklogBytesMax; one with more than InflightMax
// requests in service is answered overloaded; a connection that sends no
// PEER_HELLO within HandshakeTimeout is closed (a read deadline).
//
// # Goroutines and what each owns
//
//   - TCP: per link, while connected, a reader (the only reader of the
//     socket; it completes the requests its answers answer) and a flusher
//     (writes what a caller's write left or what gathered during it);
//     while dialing, a dialer. One sweeper per transport fails requests
//     past their Timeout every TimeoutTick. The listener has an acceptor
//     and per served connection a reader, which owns its read state
//     (Reader, buffer, session, the refusing flag) and runs the Handler,
//     and a writer; the outbox is shared with the goroutines that answer.
//   - Mem: a Network runs one sweeper and, unless Manual, one deliverer.
//     In Manual mode messages are delivered by whoever calls Deliver,
//     DeliverNext or Drain, and the handler or Done runs on that goroutine.
//
// # Locks
//
//	core.mu (one link: its slots; for TCP also its state, buffer and
//	connection; for Mem its epoch and sessions) -> Network.mu (faults,
//	queue, members)
//
// That is the only nesting. TCP.mu (the links map), Mem.mu (a broker's
// links), server.mu (the served connections) and outbox.mu (one served
// connection's answers) are leaves, held for a lookup or a swap. No lock
// is held while Done or a Handler runs, nor while the Network calls into
// a broker, nor during any socket write: one write at a time is a flag
// (link.flushing, outbox.writing) set under the lock, and a descriptor
// closed under a write is net.Conn's to handle. A token (core.tokens) is
// taken before core.mu and given back under it.
//
// # The in-memory network
//
// A Network delivers every message through one queue, so a test or the
// simulator decides the order (NetworkOptions.Manual: Pending, Deliver,
// DeliverNext, Drop, Drain), and faults are decided from a seeded source
// in send order: a run replays from its seed when its brokers send in the
// same order (testing/synctest fakes time, not scheduling: see
// ../shared/CLUSTER.md). Faults per direction: Cut (a partition: lost,
// nobody told), CutOneWay, Hold (kept until lifted), Delay, Drop,
// Duplicate, Reorder; Freeze holds a broker's messages both ways (a
// stopped process, as the network sees it); Disconnect is a reset
// (requests fail at once, outcome unknown).
package peer
