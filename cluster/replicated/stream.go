package replicated

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/replica"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment/vfs"
)

// Replicate takes over a replicated stream shard's local log
// (engine.Replication).
func (r *Replicas) Replicate(rl engine.ReplicaLog) (engine.ReplicatedLog, error) {
	id := cluster.ShardID{Object: cluster.ObjectID{Kind: cluster.KindStream, Tenant: rl.Stream.ID.Tenant,
		Namespace: rl.Stream.ID.Namespace, Name: rl.Stream.ID.Name}, Shard: rl.Shard}
	if err := r.cfg.Node.Hold(id, rl.Log, replica.FollowerConfig{FS: rl.FS, Dir: rl.Dir, BootID: r.cfg.BootID, Logger: r.cfg.Logger}); err != nil {
		return nil, err
	}
	cons := replica.ConsistencyLeader
	if rl.Stream.Config.Consistency == engine.ConsistencyQuorum {
		cons = replica.ConsistencyQuorum
	}
	s := &replicatedShard{r: r, id: id, stream: rl.Stream.ID, index: rl.Shard, local: rl.Log, consistency: cons,
		onCommit: rl.OnCommit, leadershipEnded: rl.LeadershipEnded, fs: rl.FS, dir: rl.Dir}
	r.mu.Lock()
	r.shards[id] = s
	r.mu.Unlock()
	return s, nil
}

// StreamLeader is this broker's leadership of the replicated stream shard
// id, nil when it holds the shard without leading it, or does not hold it.
func (r *Replicas) StreamLeader(id cluster.ShardID) *replica.Leader {
	r.mu.Lock()
	s := r.shards[id]
	r.mu.Unlock()
	if s == nil {
		return nil
	}
	return s.leader.Load()
}

// replicatedShard serves one replicated stream shard for the engine:
// appends go to this broker's leadership when it leads, reads see what is
// committed.
type replicatedShard struct {
	r           *Replicas
	id          cluster.ShardID
	stream      engine.StreamID
	index       int
	local       *shardlog.Log
	fs          vfs.FS
	dir         string // the shard's directory: its clean-stop marker goes there
	consistency replica.Consistency
	onCommit    func(first, next int64, records []byte)
	// leadershipEnded ends the shard's subscriptions here (nil: none to end)
	leadershipEnded func(err error)

	leader atomic.Pointer[replica.Leader]
	closed atomic.Bool
}

// assign takes the shard's role in a.
func (s *replicatedShard) assign(a cluster.Assignment) error {
	me := s.r.cfg.Replica
	rn := s.r.cfg.Node
	if a.Leader != me {
		led := s.leader.Swap(nil) != nil
		rn.Follow(s.id, a.Generation)
		if led && s.leadershipEnded != nil {
			// Its subscribers would wait here for records that now reach
			// the new leader only: they end, and follow it.
			s.leadershipEnded(fmt.Errorf("%w: this broker no longer leads the shard", s.notLeader()))
		}
		return nil
	}
	if l := s.leader.Load(); l != nil && uint64(l.Generation()) == a.Generation && rn.Leader(s.id) == l {
		return nil // leading already (the node did not end it: a fence or a later leader would have)
	}
	l, err := rn.Lead(s.id, a.Generation, replica.LeadOptions{Followers: followersOf(a, me), Joined: joinedOf(a),
		Consistency: s.consistency, Timeout: s.r.cfg.Timeout, OnCommit: s.onCommit})
	if err != nil {
		return fmt.Errorf("felix/replicated: leading %v at generation %d: %w", s.id, a.Generation, err)
	}
	s.leader.Store(l)
	s.r.cfg.Logger.Info("leading a replicated shard", "shard", s.id.String(), "generation", a.Generation)
	return nil
}

// notLeader is the refusal of what only a leader serves, naming the
// leader the view knows ("" while the shard has none: a promotion under
// way, or this broker named but not serving yet).
func (s *replicatedShard) notLeader() error {
	addr := ""
	if local, leader := s.r.cfg.View.Leader(s.stream, s.index); !local {
		addr = leader
	}
	return &engine.NotLeaderError{Stream: s.stream, Shard: s.index, Leader: addr}
}

// Append hands the records to this broker's leadership of the shard.
func (s *replicatedShard) Append(entries []shardlog.Entry, gen uint32, w shardlog.Waiter) (int64, error) {
	l := s.leader.Load()
	if l == nil {
		return 0, s.notLeader()
	}
	first, err := l.Append(entries, gen, w)
	if errors.Is(err, replica.ErrNotLeader) {
		return first, s.notLeader()
	}
	return first, err
}

// Read reads what is committed: the leadership's commit watermark, or the
// commit a follower last learnt from its leader.
func (s *replicatedShard) Read(from int64, maxBytes int, dst []byte) ([]byte, int64, error) {
	if l := s.leader.Load(); l != nil {
		return l.Read(from, maxBytes, dst)
	}
	return replica.ReadCommitted(s.local, from, s.commit(), maxBytes, dst)
}

func (s *replicatedShard) commit() int64 {
	if f := s.r.cfg.Node.Follower(s.id); f != nil {
		return f.Commit()
	}
	return 0
}

// ReadGate refuses what reads the shard's end (a subscribe, a describe's
// figures) while this broker's leadership has not committed its
// generation start: its end may lie below what its predecessor
// acknowledged until then. The refusal is not_leader naming no leader, as
// while a promotion is under way: retried by a cluster client.
func (s *replicatedShard) ReadGate() error {
	if l := s.leader.Load(); l != nil && !l.Started() {
		return fmt.Errorf("%w: promoted a moment ago, its generation start has not committed yet", &engine.NotLeaderError{Stream: s.stream, Shard: s.index})
	}
	return nil
}

// Start is the local log's start.
func (s *replicatedShard) Start() int64 { return s.local.Start() }

// End is one past the last committed record.
func (s *replicatedShard) End() int64 {
	if l := s.leader.Load(); l != nil {
		return l.Commit()
	}
	return max(min(s.commit(), s.local.End()), s.local.Start())
}

// Close stops replicating the shard and closes its local log.
func (s *replicatedShard) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.r.mu.Lock()
	if s.r.shards[s.id] == s {
		delete(s.r.shards, s.id)
	}
	s.r.mu.Unlock()
	s.leader.Store(nil)
	s.r.cfg.Node.Release(s.id)
	if err := s.local.Close(); err != nil {
		return err
	}
	return replica.MarkCleanStop(s.fs, s.dir) // every record it holds is synced: no tail to lose
}
