// Package failover holds the control plane's side of shard leases and
// promotion, as a pure state machine: heartbeats in, grants out; a lease
// that runs out in, the writes and fences that move leadership out. It
// decides on the assignments placement (package cluster) wrote, and
// replaces a leader that died, or that its followers cannot reach,
// without losing a record that was acknowledged.
//
// It must never do IO, read a clock, start a goroutine or keep a
// reference to the caller's slices: time comes in events (the control
// plane's monotonic clock, as a time.Duration), and the same events in the
// same order give the same actions, so the simulator can drive it and
// tests replay it.
//
// # The caller's duties, in order
//
//  1. Win the control plane's election; its revision is the epoch. Start
//     a Machine with New(Config{Epoch: rev, Lease: L, Now: now}).
//  2. Step an Assigned for every stored assignment (read at one revision),
//     then each change the watch delivers: Assigned for a write, Removed
//     for a delete. Older revisions are ignored, so a redelivery is
//     harmless.
//  3. Step a Tick every L/4 or more often, and every Heartbeat with the
//     time it was received (At).
//  4. Drain Ready and carry out its actions in order: send each Grant to
//     the broker that sent the heartbeat it answers; send each Fence; carry
//     out each Write as one transaction comparing the key's modification
//     revision with ExpectedRevision and the election key's create
//     revision with Epoch, then step WriteDone{Seq, Revision} or
//     WriteFailed{Seq} (a compare failed, or the outcome is unknown). After
//     a WriteFailed, read the shard's key again and step it as Assigned.
//     When the epoch compare failed, this control plane is deposed: stop
//     stepping the Machine and drop it.
//  5. Step every FenceReplied with what the replica sent.
//  6. Go back to 2. A Step returns an error only for an event no state
//     could make valid (ErrInvalidEvent), and the Machine is unchanged.
//
// One goroutine owns a Machine: it is not safe for concurrent use. Ready
// hands its slice to the caller; Status returns a copy.
//
// # Leases
//
// Each heartbeat is answered by exactly one Grant, leasing the broker, for
// L, each shard it leads in the stored assignment at the stored
// generation. The broker counts the lease from when it sent the heartbeat
// and stops acknowledging at 3L/4; the machine counts it from when the
// heartbeat was received, so it runs out here last. A shard's promotion
// begins on the first Tick at or after its expiry, the latest of:
//
//	Config.Now + L                   a new control plane knows no lease in flight
//	At of its last granted heartbeat + L
//	when its leader was named + L    (a leader just named has a lease's time to report)
//
// A shard whose followers cannot reach its leader (a majority of their
// latest reports at this generation: not heard for more than L, or never
// since a lease after the leader was named) is granted to it no more, and
// is promoted once the last lease runs out.
//
// # Promotion
//
//	control plane                    store                 replicas
//	lease ran out at G
//	1 Write{G+1, leader none} ----->  CAS rev r0
//	  <---------------------------- WriteDone rev r1
//	2 Fence{G+1, epoch} -------------------------------->  every replica,
//	  (again every L/4 to those                            old leader too:
//	   not answered)                                       persist, recover
//	  <--------------------------------------------------- FenceReplied{end}
//	3 enough answers? R-M+1 (M = R/2+1) from any replicas, none from
//	  a new disk; or the old leader's own, if it stopped cleanly or the
//	  stream is a Leader stream; else wait (the shard is unavailable)
//	4 choose the highest (LastGen, end), ties to the earliest replica;
//	  a Leader stream's must reach the old leader's last durable end
//	5 Write{G+1, leader C, C first} ->  CAS rev r1
//	  <---------------------------- WriteDone: done, C is leased
//	                                from its next heartbeat at G+1
//
// Any R-M+1 replicas share one with every majority that acknowledged a
// Quorum record, so the old leader's answer counts as any other's; alone
// it is enough only if it holds all it acknowledged: a Quorum record can
// be durable on a majority of followers and not yet on its leader, so an
// unclean old leader alone is not enough for a Quorum stream. A promotion
// begun from a store with no leader does not know the old leader, and
// counts R-M+1 answers only.
//
// end is LogEnd after a clean stop and Durable after an unclean one: what
// lies past the durable end of a replica that crashed may be gone. A
// WriteFailed at any step drops the promotion; the next Assigned begins
// it again from step 1 with a generation above every one stored or
// written. A store that holds a generation with no leader (a promotion
// a deposed control plane left half done) is promoted again the same way.
//
// # Replacement
//
// A replica whose broker heartbeats from another disk is gone for good.
// A promotion begins at once for each shard that has one (not a lease
// later), and its step 1 gives the gone replica's place to the broker's
// new disk, recorded as a Join at G+1: every replica learns the new set
// with the generation, and the leader named at G+1 ships its log to the
// new one. A joined replica's fence answer counts towards R-M+1 only
// once its log reaches its join generation (it holds that generation's
// start record, and so all that was acknowledged before); and since the
// old leader may still be leased when a replacement begins, nobody is
// named before the old leader answered its fence or its lease ran out
// (replace.go).
//
// # Invariants
//
//   - A shard is leased only to the leader stored for it, at the stored
//     generation, and never to two replicas at one generation.
//   - No promotion's Write is sent before the shard's expiry: L after this
//     control plane started, after the last granted heartbeat was received,
//     and after the leader was named.
//   - Every Write carries the epoch and is a compare-and-swap on the
//     revision last read or written; a failed one is never retried blindly.
//   - Every leaderless Write takes a generation above every generation
//     stored or written before for the shard; a Write naming a leader
//     takes the leaderless one's, and its leader is one of its replicas.
//   - A leader is chosen only from answers to a fence at its generation
//     and this epoch, from the replica set, not from a new disk, and only
//     once every record acknowledged at Quorum is among them (counting no
//     joined replica whose log is below its join generation). An answer
//     shorter than another is never chosen.
//   - A replaced replica is replaced only by its own broker's new disk,
//     at a new generation, and no one is named in a replacement before
//     the old leader answered its fence or its lease ran out.
//   - A shard with no replica that can hold its acknowledged records (R=1
//     and its broker gone, or only new disks) stays unavailable: it is
//     never served short or empty.
package failover
