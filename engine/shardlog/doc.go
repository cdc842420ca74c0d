// Package shardlog is one shard's durable log: dense offsets, group commit,
// crash-safe rollover, recovery, reads, retention and truncation, over the
// segment format and the vfs seam.
//
// It must never block an appender on a disk (appends queue and are told
// later; they wait only for buffer room), never acknowledge a record below
// the durability its FsyncMode promises, never let a record claim a segment
// file before that file's header and directory entry are durable, never
// open a log whose damage it finds and cannot prove was an unfinished
// write, and never serve a record past damage found after the open (the
// log goes offline instead).
//
// # Data flow
//
//	Append (any goroutine, under mu)       committer (one goroutine)
//	  assign offsets, frame records          take the fill buffer whole
//	  into the fill buffer  ---------->      write it (OnCommit: write linked
//	  queue a Waiter                           to fdatasync; one flush serves
//	                                           every append queued before it)
//	                                         publish the watermark
//	                                         OnVisible(records), then Waiters
//
// Two buffers alternate: while the committer writes one, appenders fill
// the other. A buffer holds records for at most a few segments; where a
// record does not fit the tail segment, the appender starts a new one and
// the committer rolls over when it reaches that chunk.
//
// Waking the committer is a hand-off to another goroutine, which on a
// small machine costs more than the append: AppendWithoutWake leaves it
// asleep, and the caller wakes it once (Wake) after appending everything
// it has (a server, every frame of one socket read). An append that must
// wait for buffer room wakes it itself. Under None and Periodic that caller
// may instead do the committer's work on its own goroutine (FlushHere):
// only while the committer is idle (it holds neither buffer), for a small
// fill buffer whose segments are all open (no rollover), never with an
// fdatasync. Whoever holds the spare buffer is the committer for that
// flush, so flushes stay one at a time and in order.
//
// # Group commit across logs
//
// Under OnCommit, logs that share a FlushScheduler (Options.FlushScheduler,
// flushsched.go) hand their flushes to its one goroutine instead of
// waking their own committers: each round it takes the fill buffer of
// every log with records waiting, writes each, syncs them all with one
// submission (vfs.SyncBatch), and then publishes and tells each log's
// waiters as its committer would. Before a round it gathers: it waits
// until the Appends the last round acknowledged, and those queued while
// it synced, are all queued again, or half the last sync's time (at most
// 1 ms) has passed, so each sync serves the callers the last round
// answered as well as those who queued during it. The scheduler takes a buffer only as FlushHere does (it holds the
// spare: one flush at a time per log, in order) and only when no rollover
// falls inside it; a rollover, and everything once the log is closing,
// stays with the log's committer. A log's waiters are acknowledged after
// its own file's fdatasync, and a failed write or sync poisons that log
// alone.
//
// # Acknowledgement of a flush
//
//	committer, after the write (and fdatasync) of buffer k:
//	  publish the watermark, OnVisible(records)
//	  for each Waiter of k, in offset order:
//	      Committed(first, last, nil)          a plain Waiter
//	      CommittedIn(&batch, first, last)     a BatchWaiter: may batch.Defer(f)
//	  for each Flusher deferred: FlushAcks(FlushInfo{Flushers, Synced})
//
// So a waiter that answers over a connection encodes its answer and
// defers the connection's write to the end of the flush: a flush's answers
// to one connection leave in one write. A failure tells every waiter
// through Committed, with the error, and has no batch.
//
// # Watermarks
//
//	start <= durable <= written <= next (the offset the next append gets)
//	visible = written (None, Periodic) or durable (OnCommit)
//
// visible (End) is the acknowledgement point. Readers never see past it, so a
// subscriber never sees a record its publisher could still lose to a crash
// of the process. durable trails written under Periodic by at most the
// interval (the background loop syncs every interval/2). Under None and
// Periodic the committer also asks the background loop to sync the active
// segment each time an eighth of a segment was written unsynced (sync
// ahead), so the background seal of a retired segment has little left to
// flush, and the disk's writes are spread rather than left to the kernel's
// dirty-page limits. A sync of the active segment moves durable only once
// no retired segment waits for its seal; each seal moves it to the next
// segment's base.
//
// # Rollover, in the order that keeps every crash openable
//
//  1. sync the retired segment, trim its preallocated tail, mark it sealed,
//     write its index (never trusted; rebuilt when missing or damaged).
//     Under OnCommit the committer does this before step 2; under None and
//     Periodic the background loop does it while records go on into the
//     next segment (retire.go), and recovery cuts the log where a crash
//     left a retired segment short (settle.go);
//  2. take the prepared spare (zero-filled and synced in the background) or
//     create and preallocate a new file (ENOSPC refuses the rollover here,
//     and the file is removed again);
//  3. write and fdatasync the header, rename the spare into place, sync the
//     directory;
//  4. only then write records into it.
//
// A crash before 3 completes leaves a spare (removed on open) or a segment
// with no header and nothing after it (removed on open); after 3 an empty
// segment, which is simply the active one.
//
// With PrepareSegments under OnCommit, records belong in blocks that
// already exist (an fdatasync over them flushes data only). Under None and
// Periodic the option is ignored: no acknowledgement waits for an
// fdatasync, and zero-filling every segment before its records would
// double the disk writes. Under OnCommit a segment that did not come from
// a spare (a new log's first, one created while no spare was ready, one
// reopened by Truncate) is unprepared: once it holds a record and a spare
// is ready, the next append starts a new segment, which takes the spare.
//
// # Recovery
//
// The last segment is scanned as active: a torn tail (an unfinished write:
// the record runs past the end of the file, or ends in zeros with nothing
// after it) is cut off, zeroed in place when the file goes on past it. A
// segment from the recovery point's on may be retired but unsealed: it is
// scanned the same way, and where it stops short of the next segment's
// base every later segment is removed. Those are all that a crash can
// have left unsynced, and all that recovery reads in full: a restart costs
// the unsynced tail, not the log. Every segment before the point's was
// sealed (synced, trimmed to its last record, its index written) before
// the point moved past it. It opens on its header and its size alone
// (recover_sealed.go), several at once: its records end where its file
// does, and its offsets where the next segment's begin (or before, when
// compacted). A header that does not stand is scanned, verifying the
// segment, at open. What the rest of it says (its last generation, its
// newest time, its index entries, through the index's checksum, checked
// against its size, its last records and the next base) loads when first
// needed (index_lazy.go): by a read, Truncate, GenerationEnd or retention
// by age. Damage found at open refuses to open with a
// *segment.CorruptionError naming file, byte and fault. Reopening is
// idempotent.
//
// Recovery restores the log's last generation (LastGeneration, the floor
// under which Append and AppendAt refuse a batch as stale): the generation
// of its last record. The active segment's scan gives it; when that
// segment holds no record (a crash right after a rollover created it), the
// newest sealed segment holding one does, its meta loaded at open from its
// index head and last records, scanned only when its index does not stand
// (restoreLastGen, recover.go). A log that holds no record at all (every
// record removed by Truncate at Start, or by retention past an empty
// active segment) has no record to say it, and reopens at generation 0.
//
// After Open, a background goroutine verifies each segment opened on its
// index in full, newest first, paced (Options.VerifyPacer) and stopped by
// Close (verify.go). Every read checks the checksums of the records it
// returns, verified or not, and never steps over offsets missing from a
// dense segment. Damage found by any of them, or by a lazy load, after
// Open, takes the log offline (offline.go): every later Read and Append
// fails with ErrOffline and the *segment.CorruptionError, so nothing past
// the damage is ever served without it; the caller's other logs go on.
//
// # Failure
//
// A failed write or fdatasync poisons the log: every waiting append fails,
// every later append is refused (matching ErrPoisoned and the cause), and
// reads of visible records keep working. After a failed fdatasync the page
// cache cannot be trusted, so only reopening the log from disk (Reopen)
// clears the poison. A Healer (heal.go) does that for an owner whose log
// failed for lack of space: it retries Reopen with backoff on a goroutine
// of its own once space is back, and hands the new log to the owner's
// TakeFunc, under the Healer's Lock (which the owner holds around
// retention, compaction and Truncate).
//
// Each append not yet acknowledged is told what became of it, by chunk of
// the failed flush (commit.go, progress): one whose chunk was written as
// durably as the mode acknowledges before the failing step (under OnCommit,
// synced by the seal of the rollover that then failed) is acknowledged; one
// some of whose bytes may have reached a file fails with the poison (it may
// be in the log); one none of whose bytes were written fails with the
// poison's refusal, which alone matches ErrNoSpace when the cause is
// ENOSPC. So ErrNoSpace always means "not in the log". A rollover reserves
// the new segment whole (step 2) and a reservation refused for ENOSPC
// refuses the rollover before any record is written into it, so that on a
// file system that preallocates a full disk stops the log at a rollover,
// where nothing is ambiguous.
//
// # A follower's append
//
// AppendAt (appendat.go) places a batch at the offsets its leader gave it,
// only where it continues this log exactly: at the next offset (else
// ErrGap or ErrOverlap), after a record of the leader's previous
// generation (else ErrDiverged), under a generation no lower than the
// log's (else ErrStaleGeneration), each a *DivergenceError that appends
// nothing. The check runs before the generation floor, so a new leader
// resending an older leader's records is told "diverged", not "stale". An
// empty log has nothing to compare: at offset 0 the previous generation
// must be 0; emptied at a later start, any is accepted. The checks and the
// placement run under mu, as Append's do, so racing AppendAt calls at one
// offset place exactly one batch; after that it is Append's path
// (acknowledgement, durability, allocation-free). A follower's log takes
// AppendAt only. On ErrDiverged the follower truncates to
// min(its GenerationEnd(PrevGen), the leader's GenerationEnd(LastGen))
// and asks again; each round shortens its log.
//
// # Compaction
//
// Compaction rewrites the sealed segments (never the active one) keeping
// the records a caller's KeepFunc keeps, with their offsets and bytes
// unchanged, into compacted segments (segment.HeaderFlagCompacted: offsets
// increase with gaps; each covers up to the next segment's base). It never
// renumbers an offset and never rewrites a record in place: the first part
// takes the first sealed segment's base, so Start does not move, and the
// next offset appended is what it would have been. Reads from an offset
// compaction removed start at the next record present.
//
//	PrepareCompaction (appends and reads go on)
//	  read each sealed segment, verifying it; KeepFunc decides each record
//	  write compact-<base>.part files whole, sync each, sync the directory
//	Commit (under the compaction lock, which retention also takes)
//	  1. Sync: every record appended so far is durable, so nothing that
//	     justified a drop can be lost by a crash after the swap
//	  2. write and sync compact.commit (from, to, part bases), sync the
//	     directory                                    <- the commit point
//	  3. remove the replaced segments and indexes, sync the directory
//	  4. rename each part to <base>.seg, sync the directory
//	  5. remove compact.commit, sync the directory
//	  6. swap the segment list in memory; write the parts' indexes
//
// Recovery looks for a whole, valid compact.commit first: found, it runs
// steps 3 to 5 again (each is idempotent); not found, it removes every
// part. So a crash anywhere leaves the old segments or the compacted ones,
// never a mixture. Readers inside a replaced segment finish on its open
// file. CompactedThrough tells a reader that must see every record (a
// watch resuming from an offset) below which records may be missing.
// Truncate must not run concurrently with a Commit.
//
// # Goroutines and locks
//
// Lock order: compaction.mu, then mu, then wmu, then a sealed segment's
// lazy.mu (index_lazy.go: a leaf, held while what a segment opened on its
// header loads, which GenerationEnd does under mu and retention and
// Truncate under wmu). A load that rebuilt an index only tries
// compaction.mu (TryLock) to write it, so it never waits against the
// order (index_lazy.go: storeIndexOfScan). goOffline takes mu, so damage is reported with no
// log lock held (the verifier, Read and a compaction hold none). mu
// guards the append side (offsets, the fill buffer, the tail segment's
// fill fields and index entries, the waiter queue, poison). wmu guards the active segment, rollover's publication of
// the segment list, and watermark publication, against the background
// syncer, retention and Truncate. The segment list is copy-on-write behind
// an atomic pointer; readers take a reference on the segment they read so
// retention cannot close it under them. The verifier (one goroutine, from
// Open to Close) takes such a reference too, and reads what a segment
// claims (its file and end) under wmu, which Truncate holds when
// it reopens one; it holds no lock while it reads. Open opens the sealed
// segments on up to eight goroutines of its own, each touching only the
// segments it was handed, and waits for them. Waiter callbacks, Flushers and
// OnVisible run on the committer goroutine (or a FlushHere caller's) with
// no lock held (a failure found by the background loop tells the waiters
// from there).
package shardlog
