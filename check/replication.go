package check

import (
	"fmt"
	"hash/fnv"
)

// Ack is a broker's acknowledgement of a write, as the broker (or the
// simulator watching it) records it.
type Ack struct {
	Shard      Shard
	Broker     string
	Generation uint64
	Offset     uint64
	// Time is when the acknowledgement was sent; LeaseSent is when the
	// heartbeat that won the lease it relied on was sent, and Lease its
	// duration L, all on the broker's clock. The ack must fall within
	// [LeaseSent, LeaseSent + 3L/4]; Lease 0 is no lease.
	Time, LeaseSent, Lease int64
}

// ShardLogs are a shard's replicas' logs, taken once they stopped
// changing (or at one instant of the simulator's), with the quorum
// watermark the leader had then.
type ShardLogs struct {
	Shard     Shard
	Watermark uint64 // every offset below it is committed
	Replicas  []ReplicaLog
	// Final is the log the shard ended with (its last leader's), against
	// which reads are checked for a roll-back; nil: not checked.
	Final []LogEntry
}

// ReplicaLog is one replica's log, in offset order.
type ReplicaLog struct {
	Broker  string
	Entries []LogEntry
}

// LogEntry is one record of a log: Hash is HashValue of its value (any
// fixed value for a control record, which no read delivers).
type LogEntry struct {
	Offset, Generation, Hash uint64
}

// HashValue is the hash a LogEntry carries of a record's value.
func HashValue(v string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(v))
	return h.Sum64()
}

// checkAcks: one broker acknowledges for a shard at a generation, and only
// within 3L/4 of its lease.
func checkAcks(r *Report, acks []Ack) {
	type shardGen struct {
		s   Shard
		gen uint64
	}
	first := map[shardGen]Ack{}
	reported := map[shardGen]map[string]bool{}
	for _, a := range acks {
		r.Stats.Acks++
		k := shardGen{a.Shard, a.Generation}
		if f, ok := first[k]; !ok {
			first[k] = a
		} else if f.Broker != a.Broker && !reported[k][a.Broker] {
			if reported[k] == nil {
				reported[k] = map[string]bool{}
			}
			reported[k][a.Broker] = true
			r.add(DoubleAck, fmt.Sprintf("shard %s generation %d: %s acknowledged offset %d, %s offset %d",
				a.Shard, a.Generation, f.Broker, f.Offset, a.Broker, a.Offset))
		}
		if a.Lease <= 0 || a.Time < a.LeaseSent || a.Time-a.LeaseSent > 3*a.Lease/4 {
			r.add(LateAck, fmt.Sprintf("shard %s generation %d: %s acknowledged offset %d at %d, its lease sent at %d for %d",
				a.Shard, a.Generation, a.Broker, a.Offset, a.Time, a.LeaseSent, a.Lease))
		}
	}
}

// checkReplicaLogs: below the watermark every replica holding an offset
// holds the same record there.
func checkReplicaLogs(r *Report, logs ShardLogs) {
	r.Stats.ShardLogs++
	type holder struct {
		broker string
		e      LogEntry
	}
	first := map[uint64]holder{}
	diverged := map[uint64]bool{}
	for _, rep := range logs.Replicas {
		for _, e := range rep.Entries {
			if e.Offset >= logs.Watermark {
				break
			}
			f, ok := first[e.Offset]
			switch {
			case !ok:
				first[e.Offset] = holder{rep.Broker, e}
			case (f.e.Generation != e.Generation || f.e.Hash != e.Hash) && !diverged[e.Offset]:
				diverged[e.Offset] = true
				r.add(ReplicaDivergence, fmt.Sprintf("shard %s offset %d below watermark %d: %s holds generation %d hash %x, %s generation %d hash %x",
					logs.Shard, e.Offset, logs.Watermark, f.broker, f.e.Generation, f.e.Hash, rep.Broker, e.Generation, e.Hash))
			}
		}
	}
}

// checkRolledBack: every record read is in the shard's final log at the
// offset it was read at, unless it lies outside that log's offsets or
// Options.Absent says it was taken away by retention or compaction.
func checkRolledBack(r *Report, ops []Op, logs ShardLogs, o Options) {
	if len(logs.Final) == 0 {
		return
	}
	at := make(map[uint64]uint64, len(logs.Final))
	for _, e := range logs.Final {
		at[e.Offset] = e.Hash
	}
	lo, hi := logs.Final[0].Offset, logs.Final[len(logs.Final)-1].Offset
	for _, op := range ops {
		in, ok := op.Input.(Read)
		if !ok || op.Outcome != Ok || in.Shard != logs.Shard {
			continue
		}
		for _, rec := range op.Output.(Delivered).Records {
			if rec.Offset < lo || rec.Offset > hi || (o.Absent != nil && o.Absent(in.Shard, rec.Offset)) {
				continue
			}
			if h, ok := at[rec.Offset]; !ok || h != HashValue(rec.Value) {
				r.add(RolledBackRead, fmt.Sprintf("shard %s: %q read at %d, the final log holds something else there", in.Shard, rec.Value, rec.Offset), op)
			}
		}
	}
}
