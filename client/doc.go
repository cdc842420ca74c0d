// Package client is the Go client of one Felix broker: publish,
// subscribe, stream administration, caches, counters and cache watches
// over the wire protocol
// (docs/protocol.md, spoken through netio/wire). It uses the standard net
// package only, so it runs anywhere Go does.
//
// It must never resend a publish except where the caller asked for it
// (PublishAtLeastOnce), never decide to retry from an error's prose (only
// from its Code), never drop an event itself (a drop is the broker's
// overflow policy, seen as Event.Missed), never let a slow subscriber hold back
// publishes, and never use a feature the handshake did not negotiate.
//
// # Use
//
//	c, err := client.Dial(ctx, "127.0.0.1:7117", client.WithToken(tok))
//	orders := client.Stream{Tenant: "acme", Namespace: "prod", Name: "orders"}
//	pos, err := c.Publish(ctx, orders, []byte("created"), client.WithKey([]byte("user-1")))
//	sub, err := c.Subscribe(ctx, orders, pos.Shard, client.SubscribeOptions{Start: client.FromOffset(pos.Offset)})
//	for ev, err := range sub.Events(ctx) { ... }
//
// # One style
//
// The API keeps to one set of types and one option idiom, so a value taken
// from one call goes into the next without a conversion:
//
//   - A shard is an int and an offset an int64, everywhere: Position,
//     Event, Message, AckRun, ShardInfo, GroupInfo, the errors that name a
//     shard, Subscribe, Group, Producer.PublishBatch, cache offsets and
//     watches. The protocol carries u32 shards and u64 offsets; an int
//     indexes a slice of shards directly, and a signed offset leaves room
//     for "none" (-1, as a Delete of a missing key answers) without a
//     second field. franz-go (Partition int32, Offset int64) and sarama
//     make the same choice. Counts (Count, Missed, Lag) stay unsigned.
//   - Options are With* values: Option configures Dial; PublishOption,
//     PutOption, WatchOption and GroupOption are plain values, so passing
//     them allocates nothing.
//   - Things are named by values: Stream{Tenant, Namespace, Name} and
//     CacheName{Tenant, Namespace, Name}; a counter is Cache(name).Counter(key).
//   - Nothing of netio/wire is in the signatures: Features, Limits, Code
//     and Details are the client's own, converted at the edge. ShardFor is
//     the protocol's routing rule (wire.ShardFor), the brokers' own.
//
// A Client and everything it returns are safe for concurrent use, except
// that a Subscription has one reader at a time (Next, Events). Every call
// that can block takes a context.
//
// # Publishing
//
// Publish and PublishBatch wait for the acknowledgement and say where each
// record landed (shard, offset; a keyed batch split across shards comes
// back as one AckRun per shard). PublishAsync and PublishBatchAsync return
// a PublishFuture at once, so a producer keeps many requests in flight on
// one connection; answers are matched to requests by request id, in
// whatever order they come. The ack mode (AckPerBatch, AckPerMessage,
// AckNone), a routing key and an explicit timestamp are PublishOptions. A
// keyed publish travels in the binary frame under FLAG_BINARY_PUBLISH_KEYED
// when the handshake negotiated it and as PUBLISH_JSON otherwise
// (wire.AppendPublishFor decides); either lands on shard
// xxh3(key) mod shards, and no key lands on shard 0.
//
// The contract's two names: Publish (publish) reconnects but never resends,
// so a failure whose outcome is unknown is returned to the caller.
// PublishAtLeastOnce (publish_at_least_once) resends under a RetryPolicy
// (an attempt count, full-jitter exponential backoff, an optional overall
// deadline, off by default) and can therefore store a record twice. A
// failure no retry can fix (Code.Retryable false: forbidden,
// unauthenticated, offset below retention, a malformed or oversized
// request) is returned at once.
//
// A third way closes the gap PublishAtLeastOnce leaves: a Producer
// (Client.Producer) takes a producer id from the broker and numbers its
// batches per shard, so a batch whose acknowledgement was lost is sent
// again and lands once (the broker answers it from memory, Duplicate).
// The broker keeps producers in memory only: a batch in flight across a
// broker restart is reported as an *UnknownOutcomeError
// (ErrUnknownOutcome), never landed twice or dropped silently.
// PublishAtLeastOnce stays the plain resend, with no id and no such
// guarantee.
//
// # Consumer groups
//
// Client.Group is one consumer of a group on one shard: Poll (a long poll
// that waits up to a given time for work), Ack, Nack with a redelivery
// delay, Extend, and for operators Describe, DeadLetters and Redrive. A
// record is claimed by one consumer at a time; a claim that lapses makes
// it owed again; delivery is at least once. Claims belong to the Group's
// consumer name (WithConsumer, random by default), not to a connection.
//
// # Subscribing
//
// A Subscription reads one shard from latest, earliest, an offset or a
// time (FromTime: the broker finds the first record at or after it), over
// a connection of its own. Each Event carries its shard, offset, timestamp,
// key and value. When the application reads slower than events arrive, the
// client's read-ahead (SubscribeOptions.Buffer) fills and that connection
// stops reading: the broker's queue for the subscription fills and its
// overflow policy (DropNew, DropOld, Disconnect) decides, while publishes
// (the broker's and this client's, on their own connection) go on. A
// replay of history is paced the same way and loses nothing. Offsets are
// dense in a shard, but not every offset holds a record: a replicated
// shard's log holds control records (the generation start each leadership
// writes first) that are never delivered. With FeatureControlEvents, in
// DefaultFeatures and offered by brokers since it was defined, the broker
// says which offsets those are, so Event.Missed is exactly the number of
// records dropped just before an event (by the overflow policy, or passed
// by retention before they were read). Without it (WithFeatures leaving it
// out, or an older broker) Missed counts every offset skipped, control
// records' included, so a replicated shard shows "missed" records that
// never existed. The end of a subscription is a
// *SubscriptionEndedError matching its cause with errors.Is
// (ErrSubscriberLagged with the first missed offset, ErrNotFound when the
// stream is deleted, ErrShuttingDown, ErrConnectionLost) and saying where
// to resume (ResumeOffset). SubscribeOptions.Until stops a subscription at
// the shard's end as it was when it began (UntilEnd, as kcat -e): the
// broker says when it is there, since the last offsets before it may hold
// control records, and Next then returns ErrEndReached.
//
// # Caches, counters and watches
//
// Client.Cache(CacheName{...}) is a handle on one cache; making
// it sends nothing. Create and Drop administer the cache; Get returns an
// Item (Found false for a key never written, deleted or expired, and
// ErrNotFound, never a miss, for a cache the broker does not hold); Put
// takes WithTTL or WithExpiresAt; PutIfAbsent and PutIfOffset (compare and
// set at the Offset a Get or a write returned) and DeleteIfOffset fail
// with a *PreconditionError naming the key's current offset. A Delete of
// a key with no live value appends nothing: Existed false, Offset -1.
// Writes never resend, like Publish.
//
// Cache.Counter(key) is a durable sum: Add answers
// the sum including itself, Get a CounterValue whose Exists false means
// never written, which is not a sum of zero. Adds are at least once: an
// application that retries an add whose answer it lost counts it twice
// when the first had landed; deltas carry no identity to deduplicate.
//
// Cache.Watch and Cache.WatchRetained open a Watch on a connection of its
// own (a key, or with WithPrefixOnShard a prefix on one shard: offsets are per
// shard), read as an iterator of WatchEvents. Besides WatchPut and
// WatchDelete, the typed events carry what a state-keeping application
// must act on: WatchSnapshot values then WatchSynced (with their count, a
// definite 0 for an empty key) start a retained watch; WatchReset says the
// resume offset was compacted away, so the application drops its state and
// takes the WatchSnapshot values that follow; WatchLagged says the broker
// ended the watch for falling behind, and (WithWatchResumeOnLag, the default)
// the watch resumes on its own from the first offset missed, so nothing is
// lost. A slow reader stops its connection's reading, as a subscription's
// does. ResumeOffset, and a *WatchEndedError's, is where WithResumeAt picks
// up with nothing missed.
//
// # A cluster
//
// DialCluster returns a ClusterClient: the same operations over several
// brokers (docs/multi-node-client.md). It takes seed addresses, learns
// the others from BROKER_LIST and never drops a seed; it keeps one Client
// per broker it has used, routes each request to its shard's leader when
// it knows it (from DescribeStream, a cache's Describe, and each
// not_leader redirect; a cache key's shard is ShardFor(key, shards)),
// passes over a broker it cannot reach, and follows a redirect at once.
// What it sends again follows the operations' names: Publish never
// resends, PublishAtLeastOnce does, a Producer re-sends safely to the
// shard's current leader and reports a batch in flight across a failover
// as ErrUnknownOutcome; reads are retried; what no attempt can fix
// (Retryable false) is returned at once. SubscribeSharded reads every
// shard of a stream, one Subscription each, merged with per-shard order,
// re-establishing a shard that lost its leader while the others deliver;
// Offsets and ShardedOptions.From resume it, one offset per shard.
//
// # Errors
//
// A refusal from the broker is a *ServerError carrying the Code, its
// name, the message and the Details; errors.Is matches the code's sentinel
// (ErrForbidden, ErrNotFound, ...) and the protocol's value of the code. Retryable and
// Ambiguous decide from the code alone. Errors of the client itself are
// ErrClosed, ErrConnectionLost, ErrProtocol, ErrRetriesExhausted,
// ErrRetryDeadline. An operation tried more than once fails with the most
// severe outcome of its tries: once one may have been applied, its error
// is Ambiguous (and does not match ErrNotSent) even when the last try was
// not sent, was cut short by a deadline, or was refused with a code that
// proves nothing of itself; the message names both failures.
//
// # Inside
//
// One connection (conn) per Client at a time for requests; a dead one is
// replaced by the next request (one dial at a time, shared by concurrent
// callers). Each Subscription has a conn of its own, closed with it.
// Goroutines per connection: the reader (the only reader of the socket; it
// completes calls, and on a subscription's connection fills its ring,
// waiting for room when it is full), the writer's flusher (writes what
// callers appended while a write was under way, and an asynchronous
// publish sent while others await their answers, so that a producer's
// publishes leave many to a write; an idle connection is written by the
// caller itself), and the pinger (keeps an idle connection
// open, and ends one whose broker has been silent for two intervals; a
// reader waiting for its subscriber does not count as the broker's
// silence).
//
// Requests awaiting answers are calls in conn.calls, keyed by request id,
// each holding one slot of the in-flight bound (the broker's
// inflight_requests_max or WithInflightMax). A call is registered before
// its frame is written, so no answer can overtake it. A waiter whose
// context ends abandons its call; the answer, when it comes, frees the slot.
//
// A ClusterClient's retries read time from a clock (the real one; tests
// give a fake one), and its state (brokers, routes, Clients) is under
// ClusterClient.mu, never held with another lock; a ShardedSubscription
// has one goroutine per shard, which owns that shard's Subscription.
//
// Lock order: Client.mu is never held with another lock. Subscription.mu,
// then conn.mu. writer.mu is taken alone. The reader goroutine never waits
// for room in the write buffer (pongs skip the bound), so a broker that
// waits for the client to read cannot deadlock it.
//
// The hot path allocates nothing per synchronous publish: the record list,
// the call and its acknowledgement runs are pooled, frames are appended to
// a reused buffer, and acknowledgements are decoded in place. An
// asynchronous publish allocates its future; an event batch one copy of its
// body, which its events share.
//
// TLS is not here yet: the protocol reserves FEATURE_TLS and the broker
// has no TLS listener; WithDialer can supply a tls.Conn meanwhile.
package client
