package broker

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/replica"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment/vfs"
)

// replicas is the broker's replication of the durable shards whose
// stream has a replication factor above 1 (engine.Replication): a
// replica.Node over the peer transport, which follows, fences and
// heartbeats, and one replicatedShard per such shard this broker holds.
// The reconcile loop gives each shard its role from the View (leads),
// after the engine opened it.
type replicas struct {
	n       *node
	rn      *replica.Node
	timeout time.Duration // the publish timeout: a Quorum write waits this long for a majority
	bootID  string        // this boot of the machine (replica.BootID): how a replica tells a power cut
	logger  *slog.Logger

	mu       sync.Mutex
	shards   map[cluster.ShardID]*replicatedShard
	external map[cluster.ShardID]externalLead // cache shards' primaries held here (HoldPart)
	// holdGroups holds the group logs of a replicated stream shard
	// (group.Manager.HoldReplicas), set once the groups are open.
	holdGroups func(engine.StreamID, int) error
}

var _ engine.Replication = (*replicas)(nil)

// openReplicas starts the node: it heartbeats the control plane the View
// names every L/4.
func (n *node) openReplicas() error {
	rn, err := replica.NewNode(replica.NodeConfig{Broker: n.replica(), Transport: n.peers, Lease: n.cfg.ShardLease,
		ControlPlane: func() string { id, _ := n.view.ControlPlane(); return id }})
	if err != nil {
		return err
	}
	n.replicas = &replicas{n: n, rn: rn, timeout: n.cfg.PublishTimeout, bootID: replica.BootID(), logger: n.logger,
		shards: map[cluster.ShardID]*replicatedShard{}, external: map[cluster.ShardID]externalLead{}}
	return nil
}

// Replicate takes over a replicated shard's local log (engine.Replication).
func (r *replicas) Replicate(rl engine.ReplicaLog) (engine.ReplicatedLog, error) {
	id := cluster.ShardID{Object: cluster.ObjectID{Kind: cluster.KindStream, Tenant: rl.Stream.ID.Tenant,
		Namespace: rl.Stream.ID.Namespace, Name: rl.Stream.ID.Name}, Shard: rl.Shard}
	if err := r.rn.Hold(id, rl.Log, replica.FollowerConfig{FS: rl.FS, Dir: rl.Dir, BootID: r.bootID, Logger: r.logger}); err != nil {
		return nil, err
	}
	cons := replica.ConsistencyLeader
	if rl.Stream.Config.Consistency == engine.ConsistencyQuorum {
		cons = replica.ConsistencyQuorum
	}
	s := &replicatedShard{r: r, id: id, stream: rl.Stream.ID, index: rl.Shard, local: rl.Log, consistency: cons,
		onCommit: rl.OnCommit, fs: rl.FS, dir: rl.Dir}
	r.mu.Lock()
	r.shards[id] = s
	r.mu.Unlock()
	return s, nil
}

// assignRoles gives every replicated shard its role in the View's
// assignment: a reconcile step, after the engine opened the shards. A
// shard this broker leads at a generation it does not lead yet starts a
// leadership (the control plane fenced this replica there before it named
// it); any other follows.
func (r *replicas) assignRoles() error {
	if r == nil {
		return nil
	}
	local := r.n.view.Local()
	errs := r.assignParts(local)
	for _, ls := range local {
		r.mu.Lock()
		s := r.shards[ls.Shard]
		r.mu.Unlock()
		if s == nil {
			continue // not replicated (factor 1), or not opened yet
		}
		if err := s.assign(ls.Assignment); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// close stops the node: every leadership ends, heartbeats stop.
func (r *replicas) close() {
	if r != nil {
		r.rn.Close()
	}
}

// replicatedShard serves one replicated shard for the engine: appends go
// to this broker's leadership when it leads, reads see what is committed.
type replicatedShard struct {
	r           *replicas
	id          cluster.ShardID
	stream      engine.StreamID
	index       int
	local       *shardlog.Log
	fs          vfs.FS
	dir         string // the shard's directory: its clean-stop marker goes there
	consistency replica.Consistency
	onCommit    func(first, next int64, records []byte)

	leader atomic.Pointer[replica.Leader]
	closed atomic.Bool
}

// assign takes the shard's role in a.
func (s *replicatedShard) assign(a cluster.Assignment) error {
	me := s.r.n.replica()
	if a.Leader != me {
		s.leader.Store(nil)
		s.r.rn.Follow(s.id, a.Generation)
		return nil
	}
	if l := s.leader.Load(); l != nil && uint64(l.Generation()) == a.Generation && s.r.rn.Leader(s.id) == l {
		return nil // leading already (the node did not end it: a fence or a later leader would have)
	}
	l, err := s.r.rn.Lead(s.id, a.Generation, replica.LeadOptions{Followers: followersOf(a, me),
		Consistency: s.consistency, Timeout: s.r.timeout, OnCommit: s.onCommit})
	if err != nil {
		return fmt.Errorf("felix/broker: leading %v at generation %d: %w", s.id, a.Generation, err)
	}
	s.leader.Store(l)
	s.r.logger.Info("leading a replicated shard", "shard", s.id.String(), "generation", a.Generation)
	return nil
}

// notLeader is the refusal of what only a leader serves, naming the
// leader the View knows ("" while the shard has none: a promotion under
// way, or this broker named but not serving yet).
func (s *replicatedShard) notLeader() error {
	addr := ""
	if local, leader := s.r.n.view.Leader(s.stream, s.index); !local {
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
	if f := s.r.rn.Follower(s.id); f != nil {
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
	s.r.rn.Release(s.id)
	if err := s.local.Close(); err != nil {
		return err
	}
	return replica.MarkCleanStop(s.fs, s.dir) // every record it holds is synced: no tail to lose
}
