// Package cluster holds the control plane's decisions, as pure state
// machines: which brokers hold each shard of each stream and cache, which
// of them leads, at which generation. This step places shards; leases and
// promotion come next and build on the same state. A thin driver (not in
// this package) does the IO: it reads and watches the store
// (cluster/store), steps what it sees into a Machine, and carries out the
// actions the Machine decides.
//
// It must never do IO, read a clock, start a goroutine or keep a
// reference to the caller's slices: the same events in the same order give
// the same actions, so the simulator can drive it and tests replay it.
//
// # The caller's duties, in order
//
//  1. Win the control plane's election; its revision is the epoch. Start
//     a Machine with New(Config{Epoch: rev}).
//  2. Drain Ready and carry out its actions in order, as 3 to 5 say.
//  3. Resync: let the writes in flight answer (their outcomes are ignored
//     now), read the whole store at one revision R, step it as a
//     Snapshot, and (re)start the watch from R+1. The first Ready holds
//     one: a new Machine knows nothing.
//  4. Write and Delete: carry each out as one transaction that compares
//     the assignment key's modification revision with ExpectedRevision
//     (0: the key must not exist) and the election key's create revision
//     with Epoch. Step WriteDone{Seq, Revision} when it is applied, and
//     WriteFailed{Seq} when a compare failed or the outcome is unknown.
//     When the epoch compare failed, this control plane is deposed: stop
//     stepping the Machine and drop it.
//  5. Unplaced: tell whoever created the object (Err says why); the
//     Machine places it by itself once enough brokers are live.
//  6. Step every change the watch delivers: BrokerJoined when a broker's
//     registration is written, BrokerLeft when its lease ends,
//     ObjectCreated and ObjectDeleted for streams and caches (with the
//     object key's create revision as its Incarnation). Events are
//     idempotent: a change delivered twice is applied once.
//  7. Go back to 2. A Step returns an error only for an event no state
//     could make valid (ErrInvalidEvent), and the Machine is unchanged by
//     it.
//
// One goroutine owns a Machine: it is not safe for concurrent use. Ready
// hands its slice to the caller; Status returns a copy.
//
// # Placement
//
// A shard's replica set is ReplicationFactor distinct live brokers, leader
// first. The leader is the broker that leads the fewest shards of all
// streams and caches together, then holds the fewest replicas; each
// follower comes from a rack the set does not use yet while one remains
// (brokers without a rack label count as one rack), then holds the fewest
// replicas, then leads the fewest. Ties go to the lowest broker id. A new shard's generation is 1
// (one past the stored one when a recreated object's old assignment is
// still there). An object whose replication factor exceeds the live
// brokers is not placed at all, never placed short, and is reported as
// Unplaced until it can be.
//
// Placement never moves a shard that has an assignment: a broker that
// joins takes new shards (it has the fewest), and a broker that leaves
// keeps its assignments, marked in Status as not live. Moving leaders is
// promotion's (the next step's), through the generation.
//
// A replica is a (broker id, disk id) pair. A broker that registers again
// with a new disk id holds none of its old data: its old replicas stay
// not live, it starts from zero counts, and placement never gives it the
// old replica's place: for a replicated shard, promotion does (package
// cluster/failover), at a new generation, as a Join that counts only once
// the new replica holds that generation.
//
// # What the next step builds on
//
// Leases and promotion add events (heartbeats, timer ticks, fence
// replies) and actions (grants, fences) to the same Machine. What they
// need is already kept per shard: its decided assignment (replicas in
// preference order, leader, generation), its stored revision, and which
// replicas are live (Status). An Assignment with the zero Leader is valid
// (promotion writes generation G+1 with no leader before it names one),
// and counts as no broker's leadership.
//
// # Invariants
//
//   - Every assignment written has distinct brokers, all live when it was
//     decided, as many as the replication factor; its leader is its first
//     replica; its generation is at least 1 and above the stored one.
//   - Every write is a compare-and-swap on the revision last read or
//     written, guarded by the epoch. A failed compare is never retried
//     blindly: the Machine resyncs and decides again from what is stored.
//   - At most one write per shard is in flight; a decision made meanwhile
//     is sent when it answers.
//   - The leader and replica counts are those of the decided assignments,
//     per replica; Status reports them per live broker.
//   - While shards are only added, on brokers that all joined before the
//     first was placed, the brokers' leader counts stay within one of each
//     other (a delete, or a broker joining later, can leave them further
//     apart; nothing already placed is moved to even them).
package cluster
