// Package replica is one broker's side of shard replication: the Leader
// that ships a log to its followers and acknowledges at the quorum
// watermark within its lease, the Follower that appends at its leader's
// offsets and answers fences, the Lease a broker counts, and the Node that
// holds a broker's replicas, serves the replication frames peers send and
// heartbeats the control plane. docs/replication.md describes the protocol
// and the test behind each rule; the control plane's side (leases granted,
// promotion) is package cluster/failover.
//
// It must never acknowledge a write outside its lease or below the stream's
// consistency, never append a batch that does not continue its log at the
// leader's offsets, never take a batch or a fence below the highest
// generation (or epoch) it has promised, never answer a fence before the
// fence is durable, never truncate what a same-generation leader may have
// counted in its quorum, and never read a wall clock (a lease is counted on
// the monotonic clock from a heartbeat's send).
//
// # The flow of one Quorum append
//
//	client -> Leader.Append ---------------------------> local log (fsync)
//	            | frame the entries as the log does           |
//	            v                                             | Committed
//	          REPLICATE ----> Follower.Replicate              v
//	            (peer)          AppendAt (fsync)           settle: commit =
//	                            |                          majority-th highest
//	          REPLICATE_ACK <---+ once durable             end (leader's own
//	            | matched = durable end                    included, from the
//	            v                                          generation's start
//	          settle ------------------------------------> record on); ack
//	                                                       each append below
//	                                                       it while the lease
//	                                                       holds, in order;
//	                                                       OnCommit (readers)
//
// A follower behind (a new one, one that missed batches, one answering
// mismatch) is sent from the leader's log instead, by the leader's own
// goroutine, once the leader holds those records durably.
//
// # External leaderships (a shard's parts)
//
// A log its owner appends to (a cache's values, a shard's secondary parts:
// engine/replication_part.go) is led External: the leadership takes no
// Append and ships what the owner appended. At Quorum it still appends the
// generation's start record (before the owner can see it lead), and the
// owner, once its own log has a write at its FsyncMode, asks Vouch, which
// queues it with the leadership's pending acks: it is told as an Append
// would be, once the watermark passes it while the lease holds, or
// refused. A secondary part of a Quorum shard leads only once R-M+1
// replicas answered where their logs of it end and it took the longest
// tail (node_adopt.go).
//
// # Generations
//
// Every record carries the generation of the leader that wrote it. A new
// leader first appends a generation-start record (a control record,
// segment.FlagGenerationStart) and moves its commit watermark only once
// that record is committed. A follower that meets a leader of a newer
// generation persists the generation, then asks it where its log ends for
// the follower's last generation (GENERATION_END) and truncates the rest
// (KIP-279), and only then appends its batches.
//
// # Invariants
//
//   - A Leader's commit watermark only rises, never passes its local log's
//     end, and is at least one past its generation's start record before
//     it moves at all.
//   - A follower's log is a prefix of its synchronised leader's.
//   - A replica's fence (generation, epoch) only rises and is durable
//     before anything that depends on it is answered.
//   - An append refused with ErrNotLeader stored nothing; one refused
//     ErrNoQuorum, ErrUnvouched or ErrLeaderClosed may be stored.
//
// # Allocations
//
// A REPLICATE round trip allocates nothing in steady state, on either
// side: the leader's calls are made once per follower (Inflight of them,
// each with its Done bound), its frames are encoded into one reused
// buffer that Send copies; the follower finds the log by the bytes of the
// frame's LogRef (node_refs.go), its entries alias the frame, its answer
// comes off the node's free list of replies (node_reply.go) and its
// waiter off the follower's. Free lists grow to their high-water mark
// and stay. Held by TestAReplicateRoundTripOverTCPAllocatesNothing.
package replica
