// Package group is consumer groups: queues read over any durable stream's
// shard. A group is bound to one shard; its consumers poll for records,
// each handed to one consumer at a time under a claim, and ack, nack,
// extend or reject what they were handed. Two groups over one shard are
// independent; each sees every record.
//
// It must never hand a record to a consumer while another's claim on it
// stands, never move a group's cursor past a record nobody finished, never
// serve a shard this broker does not lead, and never poll in a loop with
// sleeps: a waiting poll sleeps on the shard's visibility, the group's own
// events and a timer.
//
// # Rules
//
//   - Delivery is by poll. A poll returns up to Max records: those owed
//     again first (lapsed, nacked, redriven), then records never delivered.
//     With nothing owed it may wait up to Wait: it wakes when the shard
//     makes records visible (engine.Shard.Changed), when a record becomes
//     owed (a nack, a redrive, a dead letter made durable), when a claim
//     lapses or a nack delay ends (a Clock timer), and at least every
//     OwnershipRecheck to ask Ownership again: a shard that moved ends the
//     wait with *engine.NotLeaderError. Every operation asks Ownership first.
//   - A claim stands until its deadline (Visibility, or the poll's own;
//     Extend moves it). Then the record is owed again. A late ack, after a
//     lapse nobody acted on, is still taken; an ack of a record another
//     consumer holds, or one never delivered, is refused (*ClaimError).
//   - A record delivered MaxDeliveries times whose claim lapses or that is
//     nacked, and one a consumer rejects, is dead-lettered: its dead letter
//     (offset, deliveries, reason, detail, time) goes to the dead-letter
//     log, is listed by DeadLetters, and Redrive makes it owed again with
//     its deliveries reset. With Options.DeadLetterMaxAge one older than
//     that is dropped (dead_expiry.go): no longer listed or redriven, not
//     rebuilt after a restart, its record gone at the next compaction.
//   - The cursor moves only over a contiguous run of finished records
//     (acked, dead-lettered once the dead letter is durable, skipped, or
//     engine control records), never past a gap; it is durable, monotonic
//     (a crash can lose its last moves, never move it past a record that
//     was not finished) and survives a restart.
//   - The in-flight set (claims, nacks, delivery counts) is deliberately
//     not durable. After a restart, or when this broker stops leading the
//     shard (Release), the group resumes from its cursor and those records
//     are delivered again: delivery is at-least-once. Redrives are durable.
//   - Retention outranks a group: a record removed before the group
//     finished it is skipped, the group moves past it, and each skip is
//     counted (Description.RetentionSkips, Stats.RetentionSkips).
//   - A group handed records up to WindowRecords past its cursor; a record
//     nobody finishes holds new deliveries to that bound.
//
// # Data
//
// Two logs per shard, shardlog logs beside the shard's own, written at the
// stream's generation (a replicated shard's: at the generation this broker
// leads it at, below):
//
//	<shard dir>/groups/cursors/   one record per cursor move
//	<shard dir>/groups/dead/      one record per dead letter, redrive, done
//
// Every record's key is the group name. Values (version 1, frozen),
// little-endian:
//
//	cursor record:      version u8 = 1 | cursor i64
//	group deleted:      no value, flags = segment.FlagTombstone
//	dead-letter log:    version u8 = 1 | kind u8 | offset i64 | ...
//	  kind 1, dead:       deliveries u32 | reason u8 | at, unix ns i64 |
//	                      detail length u16 | detail
//	  kind 2, redriven:   nothing more
//	  kind 3, done:       nothing more (a redriven record was finished)
//
// Rebuild reads both from their start, skipping control records (a
// replica's generation start): the last cursor record of a group wins (a
// tombstone deletes it); the dead-letter events of each offset, in
// order, say whether it is a dead letter, redriven (owed again) or done.
// Both logs are compacted (shardlog.Compact) in the background once
// CompactRecords were appended since the last time, and on Manager.Compact:
// a cursor log keeps each live group's last record; a dead-letter log the
// record that says where each dead or redriven offset stands. A group is
// durable before Create (or the poll that creates it) returns; a cursor
// move is appended without waiting, so an ack returns before it is durable
// (the group logs' FsyncMode, OnCommit by default, makes it so promptly). A
// dead letter holds the cursor until its log says it is durable.
//
// A group log that ran out of space is reopened once space is back,
// without a restart (heal.go, shardlog.Healer). From the first write it
// refuses, every operation that logs (ack, nack, reject, redrive, delete)
// is refused before it changes anything, with storage_full (the one that
// met the refusal is told it too; what it changed in memory was not
// stored, and the reopen drops it), and a poll goes on handing out what is
// readable (a cursor move or dead letter it cannot log waits in memory).
// The reopen rebuilds the shard's groups from both logs as a restart does,
// dropping the in-flight set as a restart would. A log failed with another
// cause (EIO) stays failed until a restart.
//
// # Replication
//
// A durable stream shard of replication factor above 1 has both logs
// replicated beside its records, on the same replica set, at the Leader
// level, through Options.Replication (engine.PartReplication; the parts
// engine.PartGroupCursors and engine.PartDeadLetters; replicated.go):
//
//  1. Every replica opens them and holds each as a part (HoldReplicas,
//     which the broker calls at each reconcile for every replicated shard
//     it holds; the first operation on the leader does it too). They stay
//     open and held until the engine stops the shard (or Close); a Release
//     leaves them so.
//  2. Every operation asks the parts' Leading first: while this broker
//     does not lead the shard it is refused with *engine.NotLeaderError,
//     whatever Ownership says, and nothing is appended (the replica appends
//     its leader's records with AppendAt, and may truncate).
//  3. When Leading's generation is not the one the groups were built at,
//     they are rebuilt from both logs before the operation, as at a
//     restart (adopt, as a reopen does): the cursors and dead letters other
//     leaders wrote are where this one resumes; what was in flight is
//     delivered again. A waiting poll that finds so rebuilds and goes on.
//  4. Every append goes at that generation (Leading asked again at the
//     append), with AppendAt where this leadership's last append ended, so
//     that one racing the replica, which took the log for a new leader, is
//     refused (not-leader) rather than placed among the new leader's
//     records (and should Leading still say so, the groups are rebuilt
//     from the log that moved before they serve again); it is
//     acknowledged as above on local durability, and followed by
//     Part.Appended.
//  5. A compaction keeps every record at or above Part.CompactBelow and
//     every control record, beside what it keeps anyway.
//  6. A log reopened after running out of space is held in place of the
//     old (Release, then HoldPart), under the reopen.
//
// So a promoted replica resumes each group where its log says the old
// leader had reached, lists its dead letters and redrives them; a cursor
// move or dead letter the old leader had not shipped when it died is lost,
// as in a crash of a broker alone: at most a redelivery.
//
// In memory, per group: the window, a ring of slots for [cursor, next),
// each claimed (holder, deadline), owed (not before), dying (its dead
// letter not yet durable) or done; redriven records in a map of their own
// (their window slot, if any, is done); dead letters by offset; consumer
// names, interned.
//
// # Locks and goroutines
//
// Lock order: Manager.mu (held while a shard's logs open and are held as
// parts), a group log's Healer Lock (held by its compaction and its
// reopen, which holds the part again), shardGroups.mu (read-locked by
// every operation on a group, write-locked to add or remove a group, to
// close, by a reopen and by a held shard's rebuild at a new generation),
// group.mu, then the leaves:
// shardGroups.latestMu, a held log's ledAppends.mu (held across its
// AppendAt), a group's commit queue and wake signal, and the engine's,
// the replication's and the logs' own locks. Appends to a group log
// run under group.mu; the log's committer never takes group.mu: a dead
// letter's Waiter queues its outcome under the commit queue's leaf lock and
// the next operation on the group applies it, so an appender waiting for
// buffer room never blocks the committer that frees it. Background
// compaction runs on its own goroutine per log, one at a time; its keep
// functions take shardGroups.mu (read) and group.mu per record, and close
// waits for it. A waiting poll holds no lock.
package group
