// Package engine is one broker's data: streams of (tenant, namespace,
// name), their shards and logs, publishing with routing keys, and the
// subscriptions that read a shard. The cache, counters, consumer groups and
// idempotent producers build on it.
//
// It must never know sockets or the wire format (netio translates), never
// let a publisher wait for a subscriber, and never acknowledge a record
// below its stream's FsyncMode.
//
// # Streams and shards
//
// A stream's settings live in a Catalog (a JSON file in the data directory;
// the cluster layer will supply its own). Each shard of a durable stream is
// a shardlog.Log under
//
//	<data>/streams/<tenant>/<namespace>/<name>/shard-NNNN/
//
// and each shard of a stream that is not durable is a bounded in-memory log
// with the same dense offsets. delivery and kind are stored and reported,
// not enforced; retention is enforced per stream (the broker's settings
// fill in what a stream leaves zero).
//
// A broker opens only the shards it holds (Options.Placement; Alone holds
// every one). A stream keeps a slot per configured shard, so Shards and
// routing never depend on placement; a slot is empty while the shard is
// not held here (or its log failed to open), and Stream.Shard then answers
// *NotLeaderError naming the leader Ownership knows (Stream.Held says
// which are open). Every operation on such a shard is refused that way, or
// forwarded (a publish's part led elsewhere, with a Forwarder); a split
// publish with a part nobody can take is refused whole, before any part is
// appended. Stats and TenantBytes count the shards open here.
//
// Engine.Reconcile brings the open set in line with the catalog and the
// placement, both of which may change under the engine (the cluster's
// control plane): a stream not open is added, one gone from the catalog
// (or created there anew) is stopped with ErrStreamDeleted and its
// directory removed; a held shard not open is opened, an open one no
// longer held is stopped (subscriptions end with *NotLeaderError naming
// the leader, or none when no leader is known; attachments close; the log closes) and its
// files stay. A shard that fails to open is named in the error, the rest
// are reconciled, and the next Reconcile tries it again. A slot is emptied
// before its shard stops, so an append that found the shard just before
// is refused as not held rather than as a closed log.
//
// # Routing
//
// A record's key chooses its shard, xxh3(key) mod shards; no key means shard
// 0. A publish whose records span shards is split, keeping order within
// each shard, and acknowledged once every part is, with one AckRun per
// shard. Every append first asks the Ownership seam whether this broker
// leads the shard.
//
// # Subscriptions
//
// A subscription reads one shard from latest, earliest or an offset. It
// reads history from the log until it reaches the end, then registers for
// live records under the shard's subscriber lock, so nothing published in
// between is missed; live records at offsets it already read are skipped,
// so nothing is delivered twice, and live records past the offset it
// expects next (a replicated shard whose leadership left this broker and
// came back hands over from the new leadership's commit on) send it back
// to reading history from that offset, so nothing is skipped. One whose
// shard's end lies below its offset (a replicated shard's leadership here
// ended: the end is this replica's known commit) counts as caught up and
// waits for live records. Live records are copied into the
// subscription's bounded queue by the log's committer; a full queue drops
// the new record (DropNew), the oldest (DropOld), or ends the subscription
// with the first missed offset (Disconnect). Offsets travel with the
// records, so a drop is a visible gap.
//
// A shard whose log finds a damaged record after it opened goes offline
// alone (shard_offline.go): its reads, appends and subscriptions fail with
// shardlog.ErrOffline naming the file and the byte; the other shards go on.
//
// A durable shard whose log failed for lack of space (ENOSPC) reopens it
// from disk once space is back (disklog.go): the first publish refused
// with ENOSPC starts a goroutine that tries shardlog.Log.Reopen with
// backoff (100 ms doubling to 10 s); meanwhile publishes are refused at
// once (shardlog.ErrNoSpace: nothing written, safe to send again), reads
// and subscriptions go on, and nobody waits for a disk. Records the reopen
// recovers past what was acknowledged (appends told their fate was
// unknown) go to the live subscriptions before anything newer. A log that
// failed for another cause (EIO) stays failed until a restart.
//
// # Hooks for the packages built on it
//
// Shard.Changed returns a channel closed at the shard's next visibility
// (or when it stops), for long polls; Shard.Attach registers what must
// close when the shard stops, before its log closes and its directory
// (Shard.Dir, where state kept beside the records lives) is removed.
// Stream.AppendToShard appends one batch to one shard and returns its
// first offset before the acknowledgement, so a caller that serializes its
// own appends (an idempotent producer's sequence check) knows their order.
//
// # Locks
//
// Engine.layout serializes the changes to what is open (CreateStream,
// DeleteStream, Reconcile, Close) across their IO, so two never open,
// close or remove the same shard's files; it comes first and nothing on
// the data path takes it. Engine.mu guards the stream table, held only to
// read or change it (never across a log's open or a shard's stop). A
// stream's shard slots change only under layout and are read without a
// lock (atomic). Shard.subMu guards a shard's subscription set, Changed
// channel and attachments, and is taken by the log's OnVisible;
// Subscription.mu after it. Order: layout, mu, subMu, Subscription.mu.
// Attachments are closed with layout held (an attachment's Close must not
// create, delete or reconcile streams) but neither mu nor subMu. A log's
// own locks are never held while OnVisible runs, and the engine never
// calls into a log while holding subMu except End (atomic).
// A durable shard's reopen (shardlog.Healer) takes the Healer's Lock, then
// subMu (to swap the log in), then the Healer's leaf lock, which is never
// held across IO.
package engine
