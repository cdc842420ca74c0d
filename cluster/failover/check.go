package failover

import (
	"fmt"

	"github.com/felixbroker/felix/cluster"
)

// reportsMax bounds the reports in one heartbeat: a broker holds at most
// one replica of each shard of each object, and this is far past what one
// broker is ever given.
const reportsMax = 1 << 16

// check refuses an event that no state could make valid.
func (m *Machine) check(ev Event) error {
	switch ev := ev.(type) {
	case Assigned:
		return checkAssigned(ev)
	case Removed:
		return checkShard(ev.Shard)
	case Heartbeat:
		return checkHeartbeat(ev)
	case Tick:
		return nil
	case FenceReplied:
		return firstError(checkShard(ev.Shard), checkReplica(ev.From))
	case WriteDone:
		if ev.Revision <= 0 {
			return fmt.Errorf("%w: write %d done at revision %d: a revision is positive", ErrInvalidEvent, ev.Seq, ev.Revision)
		}
		return m.checkSeq(ev.Seq)
	case WriteFailed:
		return m.checkSeq(ev.Seq)
	case nil:
		return fmt.Errorf("%w: nil event", ErrInvalidEvent)
	}
	panic(fmt.Sprintf("felix/cluster/failover: bug: event %T is not checked", ev))
}

func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// checkSeq refuses the answer to a write never sent. An answer to one
// sent and already answered, or dropped, is valid (and ignored).
func (m *Machine) checkSeq(seq uint64) error {
	if seq == 0 || seq > m.seq {
		return fmt.Errorf("%w: write %d was never sent (last %d)", ErrInvalidEvent, seq, m.seq)
	}
	return nil
}

func checkShard(id cluster.ShardID) error {
	if err := id.Object.Check(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidEvent, err)
	}
	if id.Shard < 0 || id.Shard >= cluster.ShardsMax {
		return fmt.Errorf("%w: %v: shard not in 0..%d", ErrInvalidEvent, id, cluster.ShardsMax-1)
	}
	return nil
}

func checkReplica(r cluster.Replica) error {
	if r.Broker == "" || r.DiskID == "" {
		return fmt.Errorf("%w: replica %q on disk %q: both are required", ErrInvalidEvent, r.Broker, r.DiskID)
	}
	return nil
}

// checkAssigned refuses what placement and promotion never write.
func checkAssigned(ev Assigned) error {
	sa, a := ev.Stored, ev.Stored.Assignment
	if err := checkShard(sa.Shard); err != nil {
		return err
	}
	if sa.Revision <= 0 || a.Generation == 0 {
		return fmt.Errorf("%w: %v stored at revision %d: %v", ErrInvalidEvent, sa.Shard, sa.Revision, a)
	}
	if ev.ReplicationFactor < 1 || ev.ReplicationFactor > cluster.ReplicationFactorMax {
		return fmt.Errorf("%w: %v: replication factor %d not in 1..%d",
			ErrInvalidEvent, sa.Shard, ev.ReplicationFactor, cluster.ReplicationFactorMax)
	}
	if ev.Consistency != Leader && ev.Consistency != Quorum {
		return fmt.Errorf("%w: %v: %v", ErrInvalidEvent, sa.Shard, ev.Consistency)
	}
	return checkReplicas(sa.Shard, a)
}

func checkReplicas(id cluster.ShardID, a cluster.Assignment) error {
	if len(a.Replicas) < 1 || len(a.Replicas) > cluster.ReplicationFactorMax {
		return fmt.Errorf("%w: %v: %d replicas, not in 1..%d", ErrInvalidEvent, id, len(a.Replicas), cluster.ReplicationFactorMax)
	}
	seen := make(map[cluster.Replica]bool, len(a.Replicas))
	for _, r := range a.Replicas {
		if err := checkReplica(r); err != nil {
			return err
		}
		if seen[r] {
			return fmt.Errorf("%w: %v holds %v twice", ErrInvalidEvent, id, r)
		}
		seen[r] = true
	}
	if a.Leader != (cluster.Replica{}) && !seen[a.Leader] {
		return fmt.Errorf("%w: %v: leader %v is not a replica", ErrInvalidEvent, id, a.Leader)
	}
	return nil
}

func checkHeartbeat(ev Heartbeat) error {
	if err := checkReplica(ev.Broker); err != nil {
		return err
	}
	if len(ev.Reports) > reportsMax {
		return fmt.Errorf("%w: heartbeat of %d reports, more than %d", ErrInvalidEvent, len(ev.Reports), reportsMax)
	}
	seen := make(map[cluster.ShardID]bool, len(ev.Reports))
	for _, r := range ev.Reports {
		if err := checkShard(r.Shard); err != nil {
			return err
		}
		if seen[r.Shard] {
			return fmt.Errorf("%w: heartbeat reports %v twice", ErrInvalidEvent, r.Shard)
		}
		seen[r.Shard] = true
	}
	return nil
}
