// Package netio is the broker's client-protocol server: gnet v2 event
// loops that read frames (netio/wire), hand publishes to the engine,
// stream subscriptions back, and answer everything else. docs/protocol.md
// is the protocol; its "Server" section is this package from the outside.
//
// It must never block an event loop on a disk, a subscriber or another
// connection (the one wait it allows is the engine's own backpressure:
// Stream.Publish waits while a shard's write buffer is full, which holds
// back the publishers on that loop until the log catches up; the one disk
// call it makes is a page-cache write of what a socket read published or put, at
// most flushHereBytes, under None and Periodic only, never an fdatasync:
// see "Answering a read in its own write"); never let one connection's bad
// bytes or slowness reach another; never buffer without a bound.
//
// # A connection's life
//
//	accept ──> OnOpen: a slot of Config.ConnectionsMax (none left: ERROR
//	   │       overloaded, close), register, start the handshake clock
//	   │
//	   ├─ HELLO ──> Negotiate, Authenticate ──> HELLO_OK        (anything else first:
//	   │                                                         ERROR handshake_required, close)
//	   ├─ requests, pipelined: each answered with its request id, in any order
//	   │     PUBLISH*    ──> engine ... PUBLISH_ACK / ERROR when durable
//	   │     SUBSCRIBE   ──> SUBSCRIBED, then EVENT_BATCH ... (SUBSCRIPTION_ENDED)
//	   │     UNSUBSCRIBE ──> OK, after the subscription's last event
//	   │     STREAM_*, BROKER_LIST, PING ──> their answers
//	   │
//	   └─ close: by the client; after ERROR for a frame that breaks the framing
//	      (malformed, oversized for the limit or for its type, unknown type:
//	      the ERROR names the request id when the header was readable); after
//	      handshake_timeout, frame_timeout or idle_timeout; after ERROR
//	      overloaded when its unfinished frame would pass Config.InboundBytesMax
//	      (shed); after answers pile past twice the outbound budget (a client
//	      that never reads); or by Stop. OnClose drops what waits for the
//	      socket, gives back the unfinished frame's buffer and the slot, and
//	      ends the subscriptions.
//
// Frames are decoded in OnTraffic (inbound.go). A frame that arrived whole
// in one read is read in place, in the loop's read buffer (a publish's
// records alias it until Stream.Publish has copied them into the shard's
// write buffer). The start of one still arriving is checked as soon as its
// header is in (the frame limit, its type's own bound, HELLO first) and
// copied into a pooled frameBuf that grows only with the bytes that arrive;
// every read is consumed to its last byte, so gnet's per-connection inbound
// buffer is never used. The frameBufs of all connections together hold at
// most Config.InboundBytesMax.
//
// # Goroutines and what each owns
//
//   - gnet event loops (with Multicore, one per processor but one; see
//     "Event loops and processors"): OnOpen, OnTraffic,
//     OnClose and every AsyncWrite callback of their connections. A loop
//     owns its connections' decode state (wire.Reader, the unfinished
//     frame, the Publish and record scratch, the stream-name cache, the
//     principal, the refusing flag, the subscription id counter). Handlers never block: a publish
//     is handed to the engine and answered later; stream create and delete
//     (disk IO) run on a goroutine of their own and answer from there.
//   - Log committers (the engine's; or the loop itself for a stream kept in
//     memory) call ackWaiter.Published, which encodes the PUBLISH_ACK or
//     ERROR into the connection's outbox and returns the pooled waiter. A
//     durable log's committer calls PublishedIn with its flush's batch
//     instead: the ack waits in the outbox, which defers its write to the
//     end of the flush (outbox.FlushAcks, on the committer), so the acks
//     of one flush to one connection leave in one write. A loop appends
//     the publishes of one socket read without waking the committers
//     (engine.Stream.PublishDeferWake) and wakes each once at the end of
//     the read (conn.wakes), unless the loop did the committer's work
//     itself (below). A publish allocates nothing in steady state.
//   - One deliverer per subscription pulls records with
//     engine.Subscription.Next and encodes EVENT_BATCH frames into the
//     outbox. It owns its pull buffer and drop count.
//   - Consumer groups (group*.go; with Config.Groups): a group frame is
//     decoded and checked on its loop, then runs on a group worker (an
//     idle one takes the job; none idle, one starts; idle ones exit after
//     10 s), since a shard's first group request opens its logs and an
//     ack appends. A poll waits there for records, under its connection's
//     context (cancelled by close and by Stop), after waiting for room in
//     the outbound budget, and claims at most its share of that room; it
//     answers through the outbox. Per connection: 256 polls, 1,024 other
//     group requests. Pooled jobs: a poll or ack allocates nothing.
//   - Idempotent producers (producer.go; with Config.Producers):
//     PUBLISH_IDEMPOTENT takes the publish path on the loop and is
//     answered by a pooled waiter on the log's committer (or at once, from
//     memory, for a duplicate); PRODUCER_INIT issues the id on a goroutine.
//   - Caches (cache.go, watch.go, counter.go; with Config.Caches): a get
//     runs on its loop when its shard's gate shows no write in flight (the
//     store would make a get racing a write of its key wait for that
//     write's commit, and a loop never waits); otherwise, and for every
//     counter frame (a shard's first counter operation opens its log), a
//     pooled cacheJob goes to the cache workers (cache_jobs.go: at most 64
//     goroutines, started on demand, ending after 10 s idle, a queue of
//     4,096 jobs; beyond it, overloaded). Puts and deletes are appended
//     on the loop and answered by the log's committer through a pooled
//     cacheWriteWaiter. One watchDeliverer goroutine per watch starts it
//     (a retained watch gathers its snapshot), answers WATCH_STARTED and
//     moves events from cache.Watch.Next to the outbox only while the
//     budget has room. Cache create and drop run on goroutines of their
//     own. The cacheFrontend (one per server) resolves a frame's cache ref
//     to a handle: the open cache, its ownership id, its principal's
//     resource, and one shardGate per shard. A Quorum cache's read that
//     would wait for a write to reach a majority is parked on its shard
//     (cache.GetAsync) by a worker, which moves on: it is answered when the
//     write commits, no_quorum at the publish timeout or not_leader when
//     the leadership ends; at most 1,024 parked per shard or connection and
//     16,384 per server, beyond that overloaded.
//   - gnet's ticker calls OnTick, which runs the sweep: it moves the
//     server's coarse clock (connections stamp their last activity with
//     it, an atomic load per read with a whole frame in it; an unfinished
//     frame stamps its start) and closes connections past their
//     handshake, frame or idle deadline. gnet has no deadlines; tests call sweep
//     with a fake time instead of waiting.
//   - Forwarding (see Forwarding): the leaders' answers to this broker's
//     FORWARDs run on the peer transport's goroutines (forwardCall.done)
//     and only encode into outboxes and write them (outbox.commitDirect),
//     as a log committer does. A relay
//     connection's traffic runs on the peer transport's goroutine that
//     called ServePeer, holding the relay's loop mutex; one writer
//     goroutine per relay connection runs its write callbacks and
//     runnables under that mutex, and its close.
//   - Stop's caller.
//   - TLS connections (Config.TLSAddr) have no gnet loop: an accept loop,
//     and per connection a reader goroutine (read, decrypt, traffic) and a
//     writer goroutine (write callbacks and runnables, then encrypt and
//     send). Their loop is a mutex: traffic, callbacks and runnables hold
//     it, so the connection's state is owned as on a gnet loop. conn and
//     outbox see either socket through the transport interface
//     (transport.go); nothing of the protocol is written twice.
//
// # The outbox and the outbound budget
//
// Every frame to a client goes through its connection's outbox, so frames
// keep the order in which they were committed (SUBSCRIBED before its
// events, the last event before UNSUBSCRIBE's OK). At most one buffer is
// with gnet at a time; frames committed meanwhile collect and go out in one
// write when gnet reports the previous one written (acks of one group
// commit become one write), and OnTraffic writes its own answers on its way
// out.
//
// The one write that bypasses gnet: after a flush that waited for its
// fdatasync and answered one connection alone, the committer writes that
// connection's acks to the socket itself (outbox.writeDirectLocked), when
// nothing is with gnet or about to be (no write in flight, the loop not
// in OnTraffic, gnet's outbound buffer empty when last sampled). The loop
// has gone back to sleep during the fdatasync; waking it to write one ack
// costs more than the write. It holds outbox.mu across the write, and
// gnet calls OnClose (which takes it) before it closes the descriptor, so
// the descriptor is the connection's own. What the socket does not take is
// handed to gnet as usual. A forwarded request's answer, given by the
// peer transport's reader a round trip after the loop went back to
// waiting, is written the same way, on the same terms (commitDirect), and
// so are a replicated shard's acks, which its leadership tells on a
// follower's answer with a batch of its own (FlushInfo.Replicated): one
// write per connection for the appends that answer committed.
//
// # Event loops and processors
//
// A gnet loop waits for its sockets in epoll_wait, a plain system call,
// and holds its Go processor (P) while it waits: the runtime takes a P
// back from a system call only after 20 us or more. With a loop per P,
// once every loop waits, a goroutine made runnable by anything but a loop
// (a committer's direct write, a deliverer, a client in the same process,
// the TLS and admin listeners' goroutines) waits for a P. So Multicore runs
// GOMAXPROCS-1 loops (at least one), leaving one P to the rest
// (Config.eventLoops has the figures).
//
// # Answering a read in its own write
//
// Under None and Periodic no acknowledgement waits for a disk: a flush is
// a page-cache write of a few microseconds, and handing it to the
// committer and its acks back to the loop costs two wake-ups of sleeping
// threads, each more than the write. So at the end of a socket read,
// before its answers are written, the loop asks each shard log the read
// published to to flush here (engine.WakeList.FlushHere, then
// shardlog.Log.FlushHere): when that log's committer is idle, at most
// flushHereBytes are queued and no rollover is due, the loop writes them,
// and their acks, told on the loop while the connection's outbox is still
// deferred, leave in the read's own write. Otherwise (OnCommit, a busy
// committer, a bigger read, a new segment to create) the committer is
// woken as before. Acks to other connections told by such a flush go out
// through their outboxes as from a committer.
//
// gnet's async write queue and its per-connection outbound buffer are
// unbounded, so the outbox counts the connection's budget itself:
//
//	used = bytes committed and not yet written into gnet
//	     + gnet's outbound buffer, as last sampled on the loop
//
// gnet copies what the socket does not take into pooled pieces of
// power-of-two sizes, one per write (257 KiB takes 512). So the outbox
// writes in pieces of writeChunkBytes (256 KiB), and hands gnet nothing
// while gnet holds more than sockBacklogBytesMax (256 KiB) of the
// connection's bytes: frames wait in the outbox's buffer and the loop
// samples gnet again after 1 ms, doubling to 32 ms. What gnet's copies add
// to the bytes is then a few times 256 KiB at most.
//
// A deliverer pulls from its subscription only while used is below
// Config.OutboundBytesMax, and at most the room left. A subscriber that
// does not read stops its deliverer; its engine queue fills and the engine
// drops from it per its overflow policy (a gap in offsets, counted in
// Metrics.SubscriberDrops), or ends it (Disconnect: SUBSCRIPTION_ENDED
// subscriber_lagged naming the first missed offset). The broker's memory
// for that connection stays within the budget plus one pull, and no
// publisher waits. gnet says nothing when its buffer drains, so a
// deliverer blocked on it asks the loop to sample it again after 1 ms,
// doubling to 32 ms. Answers to requests are never refused for budget; a
// connection whose outbox passes twice the budget plus one frame is closed,
// counting the outbox's buffers at their capacity and gnet's backlog: a
// bound on memory, not only on bytes. The buffers an outbox keeps for reuse
// are dropped by the sweep once nothing was committed since the last one,
// so an idle connection holds none.
//
// # Stop
//
// Stop sets the stopping flag (new connections are closed at once, new
// requests answered shutting_down), ends every subscription with
// SUBSCRIPTION_ENDED shutting_down, waits for the work it counted (publishes
// awaiting the engine, deliverers, stream create/delete goroutines: each is
// counted before the flag is checked, so none slips past), waits for every
// outbox to reach its socket, then stops gnet, which closes the
// connections. The engine is its owner's to close, after.
//
// # Locks
//
// Server.mu guards the connection set. conn.subMu guards a connection's
// subscriptions and client name; connWatches.mu, its cache watches (a
// leaf). The cache handles are a copy-on-write table loops read with an
// atomic load; cacheFrontend.mu serializes its changes and is held around
// the store's Cache lookup (so two loops never make two handles, and two
// sets of gates, for one cache) and nothing else. A TLS connection's loop mutex comes
// before its outbox's mu, and its transport's own mu is a leaf under both;
// a relay connection's the same (relay_transport.go). relaySet.mu, the
// relay connections' table, is a leaf.
// outbox.mu guards the outbox; it is a leaf:
// nothing is called under it but gnet's AsyncWrite and Close (which only
// queue a task), the appends of the codec, and a direct write's one
// non-blocking write(2). No engine call is made while
// holding any lock of this package, so the engine's locks (which call
// Published and deliver to subscriptions) never wait on ours in a cycle,
// with one exception that cannot close one: a get on a loop holds its
// shardGate.mu shared across cache.Cache.Get. A gate is taken
// exclusively only by a loop about to write, holding nothing else, and
// the committer's callback leaves a gate with an atomic add; so no
// engine lock is ever held while a gate is waited for.
//
// # Forwarding
//
// In a cluster each shard has one leader. A request for a shard another
// broker leads that can be answered in one frame is forwarded to it over
// the peer transport (cluster/peer) and answered when the leader answers;
// one that opens a flow of frames (SUBSCRIBE, CACHE_WATCH, GROUP_POLL and
// the rest of a group's frames) is redirected instead: ERROR not_leader
// naming the leader's client address (Config.Owner), so the flow runs
// between the client and the leader, without a broker in the middle
// (docs/subscribe-routing.md). Idempotent publishes are redirected too:
// their sequence check is the leader's.
//
//	client ──PUBLISH──> ingress ──FORWARD(cred, PUBLISH_BATCH keyed)──> leader
//	       <─PUBLISH_ACK─        <──────────── PUBLISH_ACK ────────────
//	                     (the runs of every shard's part, in one ack)
//
// Each side is a few files:
//
//   - The ingress (forward*.go): a Forwarder, built before the engine and
//     the server, is the engine's Forwarder (engine.Options.Forward) and
//     Config.Forwarder. conn.publish hands the engine the client's
//     credential (Stream.PublishFrom); the engine gives each part for a
//     shard this broker does not lead to Forward, which encodes it as a
//     keyed PUBLISH_BATCH asking for one ack, wraps it in a FORWARD with
//     the credential, and sends it (peer.Transport.Send, never blocking)
//     to the broker the Router names. The leader's PUBLISH_ACK tells the
//     part's waiter its offsets, so the client's PUBLISH_ACK names every
//     shard's run, local or forwarded; the leader's ERROR is relayed as it
//     came. A cache or counter frame (cache.go, counter.go) is forwarded
//     whole (ForwardFrame) once this broker authorized it, and the
//     leader's answer is copied to the outbox under the client's request
//     id. Pooled calls and buffers: nothing is allocated per forwarded
//     request. A request that cannot be routed is an ERROR, never a miss:
//     no leader known or none reachable is not_leader, no answer within
//     the Timeout is timeout (it may have been applied).
//   - The leader (relay*.go): ServePeer serves each FORWARD on a relay
//     connection, one per (peer, credential): a conn like a client's, over
//     a relayTransport instead of a socket, so every frame is handled,
//     authorized, limited and answered by the code a client's is. Its
//     first frame is a HELLO made up with the credential as its token.
//     Only the frames with one answer are relayed (a publish asking for
//     ack per batch, CACHE_GET/PUT/DELETE, COUNTER_ADD/GET); and a relayed
//     request is never forwarded again (not_leader instead), so brokers
//     whose routing disagrees cannot bounce a request between them. Relay
//     connections are bounded (RelayConnsMax: the least recently used
//     idle one is closed), closed by the sweep when idle for two minutes
//     or when their token expires, and by Stop once what they took on is
//     answered. They do not count against Config.ConnectionsMax nor a
//     tenant's connection quota.
//
// The credential is verified twice: by the ingress at the client's HELLO
// and for each request, and by the leader, with its own Authenticator, at
// the relay connection's HELLO (signature, trusted keys, expiry, on its
// clock) and for each request on it. A token the leader does not trust,
// or one expired by its clock, is refused there (unauthenticated), and a
// permission it does not grant is forbidden: the refusal reaches the
// client unchanged. Routing never launders a credential.
//
// # Authorization
//
// The Authenticator (nil: auth off) checks HELLO's token and returns a
// Principal; every request that touches a stream, cache, counter or group
// asks Principal.Allow before it looks the resource up (a refusal never
// says whether it exists), and a refusal is ERROR forbidden, or
// unauthenticated (closing the connection) once the token has expired.
// TokenAuthenticator (authn.go) is the one over auth.Verifier; its
// actionTable maps each Action to the token permission it needs. A
// connection keeps its raw token beside its principal: the sweep closes
// it at the token's expiry, and a forwarded request carries the token to
// the owner, which verifies it again (see Forwarding). Quotas
// (nil: none) are asked at HELLO for a connection slot of the token's
// tenant and before each publish for its bytes (quota.go).
package netio
