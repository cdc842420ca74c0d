// Package wire is Felix's client protocol codec: frames to bytes and bytes
// to frames, for the gnet server and the Go client alike. docs/protocol.md
// is the full reference; testdata/wire holds a byte-exact vector per frame
// type.
//
// It knows bytes only. It must never touch a socket, start a goroutine,
// keep a buffer between calls, or allocate on a hot frame (PUBLISH,
// PUBLISH_BATCH, PUBLISH_IDEMPOTENT, PUBLISH_ACK, EVENT_BATCH and the
// cache, counter and group data frames): those encode into the caller's
// buffer and decode in place.
//
// # Frame (version 1, frozen)
//
// Every frame, in both directions, is a 16-byte header and a body,
// little-endian:
//
//	0               4       6       8                              16
//	+---------------+-------+-------+-------------------------------+
//	| length (u32)  | type  | flags | request id (u64)              |
//	|               | (u16) | (u16) |                               |
//	+---------------+-------+-------+-------------------------------+
//	| body (length - 12 bytes)                                      |
//	+---------------------------------------------------------------+
//
// length counts every byte after itself, so a frame is length+4 bytes and
// length is at least 12. Type numbers, flag bits, feature bits and error
// codes are frozen: new ones take new numbers. A request carries a request
// id the client chose; every answer to it (OK, ERROR, PUBLISH_ACK, ...)
// repeats it. Frames the broker pushes on its own (EVENT_BATCH,
// CACHE_WATCH_EVENT, SUBSCRIPTION_ENDED, WATCH_ENDED) carry request id 0.
//
// Flags belong to the frame type; a bit the type does not define is
// malformed. Publish frames define FlagTimestamp (0x0001) and FlagKeyed
// (0x0040, FLAG_BINARY_PUBLISH_KEYED, fixed by contract); GROUP_POLL,
// GROUP_ACK, GROUP_NACK and GROUP_EXTEND define FlagGroupConsumer (0x0002:
// a consumer name follows the group ref).
//
// Bodies are binary (hot frames and small answers) or a JSON object
// (control frames, Type.JSON). Binary fields are fixed-width little-endian
// integers, u8-length-prefixed names (StreamRef, CacheRef, group, client
// and broker names) and uvarint-length-prefixed keys and values. Varints
// must be minimal. A body with bytes left over is malformed.
//
// # Session
//
// The client sends HELLO (version range, feature bits, auth token, client
// name); the broker answers HELLO_OK (the version chosen, the intersection
// of the feature bits, its id and its limits) or ERROR and closes. Nothing
// else may precede HELLO. Only negotiated features may be used
// (RequiredFeatures). A peer without FeaturePublishKeyed gets keyed
// publishes as PUBLISH_JSON, which decodes into the same Publish.
//
// # Peer frames
//
// Brokers speak this protocol to each other over the peer transport
// (cluster/peer), with a handshake of their own (peer.go) and one frame no
// client ever sends or receives (a client port refuses both):
//
//	type    name           direction          body
//	0x0009  PEER_HELLO     dialer -> listener  versions, features, limit, broker id
//	0x000A  PEER_HELLO_OK  listener -> dialer  version, features, limits, broker id
//	0x000B  FORWARD        ingress -> leader   credential + one client request
//
// FORWARD (forward.go) carries a client's request, whole, to the broker
// that leads its shard, with the client's credential, which the leader
// verifies again:
//
//	+----------+------------+------------------------------------------+
//	| cred len | credential | inner frame: one whole client frame      |
//	| u16      | (<= 8 KiB) | (its 16-byte header and body), a request |
//	+----------+------------+------------------------------------------+
//
// Its answer is the inner request's own answer (PUBLISH_ACK, CACHE_VALUE,
// CACHE_WRITTEN, COUNTER_VALUE or ERROR), one frame, under the FORWARD's
// request id.
//
// # Contracts
//
// Reader.Next finds frames in whatever bytes the caller holds; the caller
// consumes Frame.Size() bytes per frame. A declared length above
// Limits.FrameBytesMax is refused as soon as the 4 length bytes are in;
// an unknown type, undefined flags, or a length above the type's own bound
// (Limits.FrameBytesFor: HELLO, PING, PONG and the small control requests
// are bounded by what they can hold) as soon as the 16 header bytes are.
// So a receiver never waits for, nor holds, a body that cannot be valid.
//
// Decoding: each frame type decodes into its own struct with
// Decode(Frame, Limits). Every declared length and count is checked
// against its limit and against the bytes actually present before anything
// is sliced or walked; a decoder never allocates for a binary frame (apart
// from a *LimitError on refusal), never panics, and checks every record of
// a batch up front, so the iterators cannot fail. Decoded slices alias the
// frame: they are valid while the caller keeps those bytes unchanged (with
// gnet, until Discard), and must be copied to outlive them.
//
// Encoding: AppendX(dst, requestID, ...) appends one whole frame to dst
// and returns it, allocating only if dst lacks capacity. Batch writers
// (BeginPublishBatch, BeginEventBatch, BeginGroupRecords) build a batch in
// place one record at a time. Encoders trust their input where the wire can
// express it; where it cannot (a name over 255 bytes, a key in a frame
// without FlagKeyed, decreasing event offsets) they panic: that is a bug in
// the caller, who checks untrusted names and keys with Limits first.
//
// Errors: every error this package returns or decodes unwraps to a Code,
// which is its own sentinel (errors.Is(err, CodeNotLeader)). errors.go is
// the one list of codes with their names and retryability. Nothing in this
// package is shared mutable state; all of it is safe for concurrent use.
package wire
