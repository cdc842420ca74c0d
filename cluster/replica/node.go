package replica

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/peer"
	"github.com/felixbroker/felix/netio/wire"
)

// NodeConfig is what a Node is started with.
type NodeConfig struct {
	Broker    cluster.Replica // this broker and its disk
	Transport peer.Transport
	// ControlPlane names the broker the active control plane runs on, ""
	// while none is known. Heartbeats go there.
	ControlPlane func() string
	// Lease is L: a heartbeat every L/4.
	Lease time.Duration
}

// Node is one broker's replication: the replicas of logs it holds, each a
// Follower and, while it leads, a Leader; it serves the replication
// frames peers send (REPLICATE, GENERATION_END, FENCE) and heartbeats the
// control plane, applying the leases it grants.
type Node struct {
	cfg NodeConfig

	mu   sync.Mutex
	logs map[cluster.ShardID]*held
	seq  uint64
	sent map[uint64]time.Time // heartbeats in flight: seq -> when sent

	done chan struct{}
	wg   sync.WaitGroup
}

// held is one log this broker holds a replica of.
type held struct {
	id       cluster.ShardID
	ref      wire.LogRef
	log      Log
	follower *Follower
	leader   *Leader
	lease    Lease
	// assigned is the generation the store assigns the shard at, as the
	// broker last learnt it (Lead, Follow): a follower that has not heard
	// its leader yet reports it, not the older one it was fenced at.
	assigned uint64
}

// NewNode starts a node: it serves the transport's replication frames and
// heartbeats every L/4.
func NewNode(cfg NodeConfig) (*Node, error) {
	if cfg.Transport == nil || cfg.Lease <= 0 || cfg.ControlPlane == nil {
		return nil, errors.New("felix/replica: a node needs a transport, a lease and a control plane to heartbeat")
	}
	n := &Node{cfg: cfg, logs: map[cluster.ShardID]*held{}, sent: map[uint64]time.Time{}, done: make(chan struct{})}
	n.wg.Add(1)
	go n.heartbeats()
	return n, nil
}

// RefOf is the LogRef of a shard's records.
func RefOf(id cluster.ShardID) wire.LogRef {
	return wire.LogRef{Kind: uint8(id.Object.Kind), Tenant: []byte(id.Object.Tenant), Namespace: []byte(id.Object.Namespace),
		Name: []byte(id.Object.Name), Shard: uint32(id.Shard)}
}

// shardOf is the ShardID a LogRef names.
func shardOf(r wire.LogRef) cluster.ShardID {
	return cluster.ShardID{Object: cluster.ObjectID{Kind: cluster.Kind(r.Kind), Tenant: string(r.Tenant),
		Namespace: string(r.Namespace), Name: string(r.Name)}, Shard: int(r.Shard)}
}

// Hold registers a replica of shard id on log, following: it answers
// fences and takes its leader's batches from now on.
func (n *Node) Hold(id cluster.ShardID, log Log, follower FollowerConfig) error {
	follower.Ref, follower.Log, follower.Transport = RefOf(id), log, n.cfg.Transport
	if follower.DiskID == "" {
		follower.DiskID = n.cfg.Broker.DiskID
	}
	f, err := NewFollower(follower)
	if err != nil {
		return err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, ok := n.logs[id]; ok {
		f.Close()
		return fmt.Errorf("felix/replica: %v is held already", id)
	}
	n.logs[id] = &held{id: id, ref: RefOf(id), log: log, follower: f}
	return nil
}

// LeadOptions are a leadership's settings beyond the generation.
type LeadOptions struct {
	Followers   []string
	Consistency Consistency
	Timeout     time.Duration
	OnCommit    func(first, next int64, records []byte)
}

// Lead makes this replica the leader of id at generation gen (the control
// plane fenced it there before naming it). It returns the Leader, which
// takes the shard's appends.
func (n *Node) Lead(id cluster.ShardID, gen uint64, o LeadOptions) (*Leader, error) {
	n.mu.Lock()
	h := n.logs[id]
	n.mu.Unlock()
	if h == nil {
		return nil, fmt.Errorf("felix/replica: %v is not held here", id)
	}
	if gen > 1<<32-1 {
		return nil, fmt.Errorf("felix/replica: %v: generation %d does not fit a log", id, gen)
	}
	if f := h.follower.Generation(); f > gen {
		return nil, fmt.Errorf("felix/replica: %v: fenced at generation %d, above %d", id, f, gen)
	}
	if _, err := h.follower.Fence(gen, 0); err != nil { // a leader follows its own generation
		return nil, err
	}
	l, err := NewLeader(LeaderConfig{Ref: h.ref, Log: h.log, Generation: uint32(gen), Followers: o.Followers,
		Transport: n.cfg.Transport, Consistency: o.Consistency, Lease: &h.lease, Commit: h.follower.Commit(),
		Timeout: o.Timeout, OnCommit: o.OnCommit})
	if err != nil {
		return nil, err
	}
	n.mu.Lock()
	old := h.leader
	h.leader, h.assigned = l, max(h.assigned, gen)
	n.mu.Unlock()
	if old != nil {
		old.Depose()
		old.Close()
	}
	return l, nil
}

// Follow ends this replica's leadership of id, if it leads: it goes on as
// a follower of whoever leads at generation gen (0: not known yet).
func (n *Node) Follow(id cluster.ShardID, gen uint64) {
	n.mu.Lock()
	h := n.logs[id]
	var l *Leader
	if h != nil {
		l, h.leader = h.leader, nil
		h.assigned = max(h.assigned, gen)
	}
	n.mu.Unlock()
	if l != nil {
		l.Depose()
		l.Close()
	}
}

// Release stops holding id (the shard moved away or was deleted).
func (n *Node) Release(id cluster.ShardID) {
	n.Follow(id, 0)
	n.mu.Lock()
	h := n.logs[id]
	delete(n.logs, id)
	n.mu.Unlock()
	if h != nil {
		h.follower.Close()
	}
}

// Leader is id's leadership on this broker, nil when it does not lead.
func (n *Node) Leader(id cluster.ShardID) *Leader {
	n.mu.Lock()
	defer n.mu.Unlock()
	if h := n.logs[id]; h != nil {
		return h.leader
	}
	return nil
}

// Follower is id's replica on this broker, nil when it holds none.
func (n *Node) Follower(id cluster.ShardID) *Follower {
	n.mu.Lock()
	defer n.mu.Unlock()
	if h := n.logs[id]; h != nil {
		return h.follower
	}
	return nil
}

func (n *Node) lookup(r wire.LogRef) *held {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.logs[shardOf(r)]
}

// Close stops heartbeats, every leadership and every follower.
func (n *Node) Close() error {
	close(n.done)
	n.wg.Wait()
	n.mu.Lock()
	logs := n.logs
	n.logs = map[cluster.ShardID]*held{}
	n.mu.Unlock()
	for _, h := range logs {
		if h.leader != nil {
			h.leader.Close()
		}
		h.follower.Close()
	}
	return nil
}
