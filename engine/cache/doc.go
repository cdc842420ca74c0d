// Package cache is one broker's log-backed key/value caches: put, get and
// delete with TTLs and conditions, compaction, key and prefix watches
// (resumable, retained), and counters, for caches scoped (tenant,
// namespace, cache, key) and sharded like streams. The network handlers
// and the cluster layer build on its API; it knows nothing of sockets.
//
// It must never acknowledge a write below its cache's FsyncMode, never let
// a writer wait for a watcher, never renumber an offset or rewrite a record
// in place, never deliver a silent gap to a watch, and never answer a read
// from state a crash could still take back (a get waits for the write it
// sees to commit).
//
// # Storage
//
// A cache is a log: every shard of it is a shardlog.Log, and a write
// appends one record (a delete a tombstone). With a storage directory
// (Options.Dir) a cache created durable keeps its logs there and survives
// restarts; without one, or when created not durable, its logs live in
// process memory (package volatile: the same logs, format, compaction and
// watches, lost on exit). Counters need durable storage (ErrNoStorage
// otherwise). Only the shards this broker holds have a log here (see
// Placement and ownership).
//
//	<dir>/caches/catalog.json                       the cache catalog (Catalog)
//	<dir>/caches/<tenant>/<ns>/<cache>/shard-NNNN/values/    the shard's log
//	<dir>/caches/<tenant>/<ns>/<cache>/shard-NNNN/counters/  its counters' log
//
// A key's shard is xxh3(key) mod shards (engine.ShardFor). Records (segment
// format; flags from the registry in package segment):
//
//	put           key | value                              flags 0
//	put with TTL  key | expiry (i64 unix ns) | value        FlagExpiry
//	delete        key |                                     FlagTombstone
//	counter add   key | delta (i64)                         flags 0 (counters log)
//	checkpoint    key | sum (i64) | last add offset (i64)   FlagControl (counters log)
//
// # The index
//
// Each shard keeps, in memory, key -> offset of the record holding the
// key's live value: a map from the key's 64-bit xxh3 hash to an entry of
// the offset, a second 31-bit hash of the key (xxh3 seeded with a seed
// drawn at open, the check) and a flag saying whether the value has an
// expiry (20 bytes a slot; about 45 bytes a key at a million keys, against
// 80 for a map[string]int64), and for the rare second key of a shared hash
// a collision map keyed by the whole key. No key is stored.
//
//	main:    hash (u64, as 2 x u32) -> offLo u32 | offHi u32 | check (bits 1-31) | expires (bit 0)
//	collide: key (string) -> fingerprint, offset, expires
//
// A writer trusts an entry whose check matches as its key's: a wrong
// answer needs two keys of a shard sharing 95 bits of hash (about n^2/2^96
// for n keys: 1.3e-17 at a million), and a new seed at each open keeps any
// pair from doing so on every run. So a put or delete over a value with no
// expiry reads nothing: its value is live and its record present. One over
// a value with an expiry reads the record, for the expiry (from the ring of
// its writes not yet visible, the value cache, or the log before taking
// the writer lock, so the writers of a shard read in parallel, using it if
// the entry still names that offset), and that read confirms the key by
// the record's. A get reads the record (or the value cache's copy of it)
// anyway and confirms every main entry by its key, so a get never answers
// with another key's value. The index is rebuilt at open by replaying the
// log (BenchmarkRebuild gives the rate).
//
// A write, under the shard's writer lock: read the key's state (the
// index; the record only for an expiry), check the condition (a
// *PreconditionError carries the current offset), point the index at the
// offset the append will get, then append. So the index always names the newest write, and a get that finds
// an offset not yet visible waits for that commit (one group commit at
// most) rather than answer from a write a crash could lose.
//
// # The value cache
//
// A store keeps, within Options.ValueCacheBytes (64 MiB by default), copies
// of records lately read, so a get of one is answered from memory rather
// than by a read of the log: a get that reads a record from the log caches
// it, and a put over a cached value caches the new one (a key being read
// stays cached across its writes; a key only written never enters). The
// cache is keyed by (shard, offset), and the record at an offset never
// changes, so nothing is ever invalidated: the index says which offset
// holds a key's value, a get consults the cache only for that offset and
// only once it is visible, and a copy holds the record's key and expiry,
// checked as the record's would be. Each opening of a shard gets a new
// number, so a dropped and recreated cache, or a reopened shard, never
// meets an older copy. Sixteen stripes, each a FIFO ring of bytes with a
// 4-way set-associative table of positions, each under its own mutex (see
// valueCache); nothing allocated per operation.
//
// # TTL
//
// An expiry is an absolute time stored in the record, checked lazily on
// every access against Options.Now: a value lives while now < expiry, so
// one that passes while the broker is down has passed. Expiry appends
// nothing (and so no watch sees it); compaction drops expired values and
// their index entries.
//
// # Compaction
//
// Compaction rewrites a shard's sealed segments keeping only the records
// the index names and that have not expired; superseded values, deletes and
// expired values go (a delete may go because compaction always starts at
// the log's first segment, so every older value of its key goes in the
// same pass). Offsets never change: the log keeps gaps. It runs in the
// background (Options.CompactEvery, when a shard has grown by
// CompactMinBytes and by as much as it held) or on Compact, never blocking
// writes:
//
//	prepare (writes and reads go on)
//	  shardlog reads every sealed segment, KeepFunc asks the index,
//	  the kept records are written whole into compact-<base>.part files,
//	  each synced, the directory synced
//	swap (compactMu held exclusively; the writer lock taken and released
//	      first, so every write the decisions relied on is appended)
//	  1. sync the log: those writes are durable before anything is dropped
//	  2. write and sync compact.commit, sync the directory  <- commit point
//	  3. remove the old segments and indexes, sync the directory
//	  4. rename each part to its segment name, sync the directory
//	  5. remove compact.commit, sync the directory
//	  6. swap the segment list in memory
//	then drop the index entries of the expired values removed
//
// Opening a log finishes a swap whose commit file is whole (steps 3 to 5
// are idempotent) and otherwise removes the parts: a crash at any step
// leaves the old segments or the new, never a mixture (see shardlog).
// Reads from an offset compaction removed start at the next record.
//
// # Watches
//
// A watch delivers the writes of one key, or of a prefix on one shard, in
// the shard's write order, each with its offset: a put with its value, a
// delete with none. Live records reach it through the log's OnVisible, on
// the committer, into a bounded queue; a full queue ends the watch with a
// *LaggedError naming the first offset it missed (a filtered watch's
// offsets are sparse, so a drop is otherwise invisible).
//
// Resume by offset registers before it reads: the watch joins the shard's
// set not live, reads history from the log until a read finds nothing,
// then goes live under the shard's watchMu, where no record can become
// visible between its last read and the switch; live records below its
// position are skipped. No gap, no duplicate. Each history read checks the
// log's CompactedThrough and reads under compactMu held shared, so a
// compaction swap cannot slip between check and read: a resume offset
// below CompactedThrough starts with a resnapshot instead, and a catch-up
// that compaction overtakes ends lagged (Compacted), from where a resume
// resnapshots.
//
// A retained watch (and a resnapshot) takes a cut under the writer lock:
// the next offset to be written. It registers live from the cut at once,
// then gathers the matching keys' values as of the cut (the index for a
// key; for a prefix, a scan of the log below the cut), each at the offset
// of the write that produced it, holding compactMu shared so none is
// compacted away meanwhile. Started reports how many snapshot events come
// first (a definite zero for an empty key); every write below the cut is
// in the snapshot and every write from it on is delivered live.
//
// # Counters
//
// A counter lives in its shard's counters log, beside the values (a
// counter and a value sharing a key are unrelated). An add folds its delta
// into the in-memory sum under the counters' writer lock and appends it;
// the answer is the sum including it. Compaction first appends a
// checkpoint (the folded sum and the offset of the last add) for every
// counter added to since its last one, then drops every record of a key
// before that key's latest checkpoint; the swap's sync makes the
// checkpoints durable first. So neither a sum nor an offset moves. Adds are
// at least once: a retried add after a lost acknowledgement counts twice.
//
// # Placement and ownership
//
// A cache's shards are placed on brokers: Options.Placement
// (engine.Placement, asked under the engine.StreamID ID.OwnershipID()
// names, "cache:<name>"; engine.Alone, every shard, by default) says which
// this broker holds, and only those get a log here, at Open, Create and
// Reconcile. A Cache keeps one slot per shard, held or not, so Shards and
// ShardFor are the same on every broker; an operation loads its slot
// atomically (no lock), and one on a shard with no log here (a get, a
// write, a counter add or get, a watch) is answered with an
// *engine.NotLeaderError naming the leader Options.Owner knows, or with
// the failure that kept a held shard from opening. Stats, Compact, the
// compactor and TenantBytes skip such shards.
//
// Every write (put, delete, counter add) on a held shard then asks
// engine.Ownership about it, and is refused with an *engine.NotLeaderError
// when this broker does not lead it; a get or a watch of a held shard of a
// cache of one replica is served here, whoever leads it (a replicated
// shard's only while it leads: see Replication).
//
// Store.Reconcile brings the open set in line with the catalog and the
// placement, both of which a cluster's control plane changes: a cache
// listed and not open is opened; a held shard not open is opened; an open
// shard no longer held is released, its slot emptied first (new operations
// are redirected) and the shard then stopped with the redirect (its
// watches end with it, and an operation in flight completes or is told
// it), its files kept for its return; a cache open and no longer listed,
// or listed with another Created time (dropped and created anew
// elsewhere), is stopped with ErrCacheDropped and its directory removed,
// as Drop does. A shard
// that fails to open is named in Reconcile's error (errors.Join), the rest
// reconciled, and the next Reconcile tries it again. Drop of a cache the
// catalog no longer has (dropped through a shared catalog) still stops it
// and removes its files.
//
// # Replication
//
// A cache created with a replication factor above 1 (durable, and only
// with Options.Replication: a store alone refuses it at Create) has each
// shard on that many brokers, all of which Placement says hold it. On
// each, both of the shard's logs are opened at once, the counters' too
// (so a follower holds it before the first add), and held through
// engine.PartReplication.HoldPart as parts engine.PartCacheValues (0, the
// shard's primary) and engine.PartCounters (1), under the cache's own
// name (engine.StreamID{tenant, namespace, name}: the cluster's object,
// not the "cache:" OwnershipID). Replication is at the cache's
// Config.Consistency (Leader by default; Quorum: quorum.go): the
// replica ships what the owner appends and, on a follower, appends the
// leader's records itself (shardlog AppendAt) and truncates where a new
// leader's log differs. So the owner (replicate.go, counter_replicate.go):
//
//   - serves a shard (a write, a get, a watch) only while part 0's
//     Leading says ok, and its counters only while part 1's does (a new
//     leader's replica adopts a follower's longer counters tail before it
//     leads that part), and otherwise answers *engine.NotLeaderError
//     naming the leader Options.Owner knows;
//   - when the generation Leading returns is not the one the shard was
//     built at, syncs the log (every record the replica appended is then
//     visible), rebuilds the index and folds the counters from the logs
//     as a restart does, and ends the watches of the earlier leadership;
//   - appends at that generation with AppendAt at the offset its writer
//     expects, after the generation of its last record, so a log the
//     replica moved between the check and the append (the leadership
//     ended meanwhile) refuses the write whole (redirected; the shard is
//     built again when it next leads), and calls Part.Appended after each
//     append so the replica ships it at once; a write is acknowledged, as
//     on a broker alone, once the local log has it at the FsyncMode;
//   - hands to the watches only what becomes visible while it leads at
//     the generation it was built at: a follower's appends reach no watch,
//     and end the watches of the leadership that is over (as Reconcile
//     does on seeing the shard lead no more), so their clients watch again
//     at the new leader, where a retained watch is served from the rebuilt
//     index;
//   - compacts a log only while it leads, keeping every record at or above
//     Part.CompactBelow (a follower's logs are compacted once it leads);
//   - releases a part before its log closes, and holds a log the Healer
//     reopened in place of the failed one (Release, then HoldPart).
//
// Cache.LogEnds tells where this broker's logs of a shard end, leading or
// following, with a channel closed when they move.
//
// # Locks and goroutines
//
// Lock order, per store and cache: Store.changeMu serializes what changes
// the set of caches (Create, Drop, Reconcile, Close) and is held while
// their shards open or stop; Cache.mu serializes opening and closing one
// cache's shards (Reconcile, stop) and is held across a shard's stop:
//
//	Store.changeMu -> Store.mu
//	Store.changeMu -> Cache.mu -> a shard's compactRunning (its stop)
//
// Per shard (logs: the values log's shardlog.Healer, its Lock;
// counters.logs: the counters log's):
//
//	compactRunning -> logs -> compactMu -> writeMu -> ixMu
//	                                       writeMu -> watchMu -> Watch.mu
//	                                       writeMu -> a value cache stripe's mu
//	                                       writeMu -> visMu (a leaf)
//	compactRunning -> counters.logs -> counterSlot.mu -> counterSlot.visMu
//	endMu: a leaf, taken by both logs' OnVisible (LogEnds)
//	parked.mu: a leaf (park.go): parked reads' waiters are told with it let go of
//
// A replicated shard calls Part.Leading under writeMu, under watchMu
// (registering a watch), under counterSlot.mu, and on the committers
// (OnVisible), so Leading must take no lock the replica holds while it
// appends to the log or waits for it. A new leadership's rebuild runs
// under writeMu and waits for the values log's Sync, which waits for the
// committer: the committer (OnVisible, a write's waiter) takes visMu,
// endMu, watchMu and Watch.mu, never writeMu. An add's waiter does take
// counterSlot.mu when its flush failed, so the counters' Sync runs with
// counterSlot.mu let go of, and the fold under it.
//
// A value cache stripe's mu is taken alone by gets, under writeMu by
// writers (never with ixMu held), and never with another stripe's.
// writeMu serializes writes (and is held across the append, which may wait
// for buffer room); ixMu guards the index against concurrent gets. The
// log's committer runs OnVisible, which takes visMu, then watchMu and each
// Watch.mu, and the write waiters, which take visMu when a write failed:
// so nothing holds watchMu, Watch.mu or visMu while it appends.
// PutAsyncHere and DeleteAsyncHere may do the committer's work on the
// caller's goroutine (shardlog.Log.FlushHere, under None and Periodic),
// OnVisible and the waiters included, after letting go of writeMu: so
// their caller must hold no lock of the shard, nor anything a waiter
// takes. Store.mu guards the table of caches and is never held while a
// shard is used, opened or stopped; no operation takes Store.changeMu or
// Cache.mu.
//
// # Failure
//
// A failed log stops the shard (every operation returns the failure; a
// write is refused before any of it is written, with ErrNoSpace when the
// log ran out of space: storage_full, safe to send again), since its index
// may name writes the disk never got. A log that failed for lack of space
// heals once space is back, without a restart (heal.go): its Healer
// retries the reopen with backoff on a goroutine of its own, nothing
// waits for it, and takeLog, holding the Healer's Lock, swaps the reopened
// log in, rebuilds a new index from it as a restart does (off every lock:
// the shard serves nothing meanwhile), then under writeMu puts the index
// in (with a new value cache number), hands the records the reopened log
// recovered past the old end to the live watches, and lets the shard
// serve. The counters' log heals the same way, folded again. A log failed
// with another cause (EIO) stops its shard until the cache is opened
// again.
package cache
