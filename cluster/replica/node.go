package replica

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
	// HeartbeatTimeout is how long a heartbeat waits for its grant; 0
	// (what a broker uses) is L/4, its period. A lost heartbeat then gives
	// up at the instant of the next tick, and when a new leadership asked
	// for a heartbeat meanwhile the heartbeat goroutine's select takes the
	// tick or that request at random: how many heartbeats follow is the
	// Go runtime's choice. The simulator sets it a nanosecond short, so
	// that a seed decides it.
	HeartbeatTimeout time.Duration
	// PartLeadDelay is how long a secondary part waits, once its primary
	// leads, before its fence and adoption (node_adopt.go), and again
	// before it leads once it adopted; 0 (what a broker uses) is at once.
	// The simulator sets it to a fraction of its step, so that the part's
	// first sends and its leadership's ticks never share an instant with
	// another goroutine's, whose order would be the scheduler's.
	PartLeadDelay time.Duration
	// OnAck is every leadership's LeaderConfig.OnAck (its primary's and
	// its parts'): nil but in a test that journals the acknowledgements.
	OnAck func(AckReport)
}

// Node is one broker's replication: the replicas of logs it holds, each a
// Follower and, while it leads, a Leader; it serves the replication
// frames peers send (REPLICATE, GENERATION_END, FENCE) and heartbeats the
// control plane, applying the leases it grants.
//
// A shard may have several logs, its parts (engine/replication_part.go):
// the primary (part "", a stream's records or a cache's values), whose
// leases and promotions the control plane weighs, and secondary parts (a
// stream's group logs, a cache's counters) that follow it: they share
// its lease, are fenced with it, and are led at its generation to the
// same followers whenever it is. Only the primary is heartbeated.
type Node struct {
	cfg NodeConfig

	mu    sync.Mutex
	logs  map[logKey]*held
	refs  refIndex                    // logs by the LogRef a frame names (node_refs.go)
	parts map[cluster.ShardID][]*held // each shard's secondary parts
	seq   uint64
	sent  map[uint64]time.Time // heartbeats in flight: seq -> when sent

	// replies are the REPLICATEs' answers not in use (node_reply.go),
	// under a leaf lock of their own.
	replies replyList

	ctx  context.Context // ended by Close: what runs on the node's goroutines stops
	stop context.CancelFunc
	done chan struct{}
	// beat asks for a heartbeat now (capacity 1): a new leadership's
	// first lease then comes a control-plane round trip after it, not up
	// to L/4.
	beat chan struct{}
	wg   sync.WaitGroup
}

// logKey names one held log: a shard and its part ("" the primary).
type logKey struct {
	id   cluster.ShardID
	part string
}

// held is one log this broker holds a replica of.
type held struct {
	id       cluster.ShardID
	part     string
	ref      wire.LogRef
	log      Log
	follower *Follower
	leader   *Leader
	lease    Lease // a primary's; a secondary part acknowledges under its primary's
	// assigned is the generation the store assigns the shard at, as the
	// broker last learnt it (Lead, Follow): a follower that has not heard
	// its leader yet reports it, not the older one it was fenced at.
	assigned uint64
	// lead is how the primary leads, for the secondary parts held later.
	lead LeadOptions
	// stopAdopt ends a secondary part's adoption under way (node_adopt.go).
	stopAdopt context.CancelFunc
}

// NewNode starts a node: it serves the transport's replication frames and
// heartbeats every L/4.
func NewNode(cfg NodeConfig) (*Node, error) {
	if cfg.Transport == nil || cfg.Lease <= 0 || cfg.ControlPlane == nil {
		return nil, errors.New("felix/replica: a node needs a transport, a lease and a control plane to heartbeat")
	}
	if cfg.HeartbeatTimeout <= 0 {
		cfg.HeartbeatTimeout = cfg.Lease / 4
	}
	n := &Node{cfg: cfg, logs: map[logKey]*held{}, refs: newRefIndex(), parts: map[cluster.ShardID][]*held{},
		sent: map[uint64]time.Time{}, done: make(chan struct{}), beat: make(chan struct{}, 1)}
	n.ctx, n.stop = context.WithCancel(context.Background())
	n.wg.Add(1)
	go n.heartbeats()
	return n, nil
}

// RefOf is the LogRef of a shard's primary log (its records).
func RefOf(id cluster.ShardID) wire.LogRef { return RefOfPart(id, "") }

// RefOfPart is the LogRef of a part of a shard ("" the primary).
func RefOfPart(id cluster.ShardID, part string) wire.LogRef {
	r := wire.LogRef{Kind: uint8(id.Object.Kind), Tenant: []byte(id.Object.Tenant), Namespace: []byte(id.Object.Namespace),
		Name: []byte(id.Object.Name), Shard: uint32(id.Shard)}
	if part != "" {
		r.Part = []byte(part)
	}
	return r
}

// shardOf is the ShardID a LogRef names.
func shardOf(r wire.LogRef) cluster.ShardID {
	return cluster.ShardID{Object: cluster.ObjectID{Kind: cluster.Kind(r.Kind), Tenant: string(r.Tenant),
		Namespace: string(r.Namespace), Name: string(r.Name)}, Shard: int(r.Shard)}
}

// Hold registers a replica of shard id's primary log, following: it
// answers fences and takes its leader's batches from now on.
func (n *Node) Hold(id cluster.ShardID, log Log, follower FollowerConfig) error {
	_, err := n.hold(id, "", log, follower)
	return err
}

// HoldPart registers a replica of a secondary part of shard id (part is
// not ""). It follows, or, when this broker leads the shard's primary
// already, leads at its generation at once.
func (n *Node) HoldPart(id cluster.ShardID, part string, log Log, follower FollowerConfig) error {
	if part == "" {
		return errors.New("felix/replica: a secondary part needs a name")
	}
	h, err := n.hold(id, part, log, follower)
	if err != nil {
		return err
	}
	n.mu.Lock()
	p := n.logs[logKey{id: id}]
	var gen uint64
	var o LeadOptions
	if p != nil && p.leader != nil && !p.leader.deposed.Load() {
		gen, o = uint64(p.leader.Generation()), p.lead
	}
	n.mu.Unlock()
	if gen != 0 {
		n.leadPart(h, p, gen, o)
	}
	return nil
}

func (n *Node) hold(id cluster.ShardID, part string, log Log, follower FollowerConfig) (*held, error) {
	ref := RefOfPart(id, part)
	follower.Ref, follower.Log, follower.Transport = ref, log, n.cfg.Transport
	if follower.DiskID == "" {
		follower.DiskID = n.cfg.Broker.DiskID
	}
	f, err := NewFollower(follower)
	if err != nil {
		return nil, err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	k := logKey{id: id, part: part}
	if _, ok := n.logs[k]; ok {
		f.Close()
		return nil, fmt.Errorf("felix/replica: %v is held already", ref)
	}
	h := &held{id: id, part: part, ref: ref, log: log, follower: f}
	n.logs[k] = h
	n.refs.put(ref, h)
	if part != "" {
		n.parts[id] = append(n.parts[id], h)
	}
	return h, nil
}

func (n *Node) logger(h *held) interface{ Warn(string, ...any) } { return h.follower.logger }

// LeadOptions are a leadership's settings beyond the generation.
type LeadOptions struct {
	Followers []string
	// Joined is the generation each replica (by broker id, this one's
	// too) that joined the set after placement joined at
	// (cluster.Assignment.Joins; absent: since placement). A secondary
	// part's adoption counts such a replica's log of the part only once
	// it reaches that generation.
	Joined      map[string]uint64
	Consistency Consistency
	Timeout     time.Duration
	OnCommit    func(first, next int64, records []byte)
	// External: the log's owner appends to it directly (a cache's values,
	// engine/replication_part.go); the leadership ships what it appends and
	// acknowledges nothing itself. Secondary parts are always led so.
	External bool
}

// Lead makes this replica the leader of id at generation gen (the control
// plane fenced it there before naming it), and every secondary part of id
// held here with it, externally, to the same followers. It returns the
// primary's Leader, which takes the shard's appends (unless External).
func (n *Node) Lead(id cluster.ShardID, gen uint64, o LeadOptions) (*Leader, error) {
	n.mu.Lock()
	h := n.logs[logKey{id: id}]
	parts := slices.Clone(n.parts[id])
	n.mu.Unlock()
	if h == nil {
		return nil, fmt.Errorf("felix/replica: %v is not held here", id)
	}
	l, err := n.leadOne(n.ctx, h, h, gen, o)
	if err != nil {
		return nil, err
	}
	for _, p := range parts {
		n.leadPart(p, h, gen, o)
	}
	n.heartbeatSoon()
	return l, nil
}

// heartbeatSoon has the next heartbeat leave now rather than at its tick.
func (n *Node) heartbeatSoon() {
	select {
	case n.beat <- struct{}{}:
	default:
	}
}

// leadOne starts h's leadership at gen under primary's lease (h is
// primary, or one of its secondary parts: led externally, and only while
// ctx holds and its primary still leads at gen).
func (n *Node) leadOne(ctx context.Context, h, primary *held, gen uint64, o LeadOptions) (*Leader, error) {
	if gen > 1<<32-1 {
		return nil, fmt.Errorf("felix/replica: %v: generation %d does not fit a log", h.ref, gen)
	}
	if cur := n.leaderOf(h); cur != nil && uint64(cur.Generation()) == gen && cur.live() {
		// Leading there already (an assignment applied twice): a second
		// leadership would write a second start record, and ending this
		// one would revoke the lease both count on, for good.
		return cur, nil
	}
	if f := h.follower.Generation(); f > gen {
		return nil, fmt.Errorf("felix/replica: %v: fenced at generation %d, above %d", h.ref, f, gen)
	}
	if h == primary && h.follower.mayHaveLostLeadOf(gen) {
		return nil, fmt.Errorf("%w: %v: this replica stopped uncleanly and may have lost records it wrote at generation %d; it leads only at a generation a promotion gives it", ErrLostLeadership, h.ref, gen)
	}
	if _, err := h.follower.Fence(gen, 0); err != nil { // a leader follows its own generation
		return nil, err
	}
	external := o.External || h != primary
	cfg := LeaderConfig{Ref: h.ref, Log: h.log, Generation: uint32(gen), Followers: o.Followers,
		Transport: n.cfg.Transport, Consistency: o.Consistency, Lease: &primary.lease, Commit: h.follower.Commit(),
		Timeout: o.Timeout, OnCommit: o.OnCommit, External: external, OnAck: n.cfg.OnAck}
	if h != primary {
		cfg.OnCommit = nil // a secondary part's owner reads its log itself; its level is its primary's
	}
	l, err := NewLeader(cfg)
	if err != nil {
		return nil, err
	}
	n.mu.Lock()
	if h != primary && !n.leadsLocked(ctx, h, primary, gen) {
		n.mu.Unlock()
		l.Close()
		return nil, errSuperseded
	}
	old := h.leader
	h.leader, h.assigned = l, max(h.assigned, gen)
	if h == primary {
		h.lead = o
	}
	n.mu.Unlock()
	if old != nil {
		if uint64(old.Generation()) < gen {
			old.Depose() // revokes the lease for its generation, which this one's grants replace
		}
		old.Close()
	}
	return l, nil
}

// leaderOf is h's leadership, nil when it has none.
func (n *Node) leaderOf(h *held) *Leader {
	n.mu.Lock()
	defer n.mu.Unlock()
	return h.leader
}

// leadsLocked: part h of primary may lead at gen now (its primary leads
// there, it is still held, its adoption was not ended). n.mu held.
func (n *Node) leadsLocked(ctx context.Context, h, primary *held, gen uint64) bool {
	p := primary.leader
	return ctx.Err() == nil && p != nil && !p.deposed.Load() && uint64(p.Generation()) == gen &&
		n.logs[logKey{id: h.id, part: h.part}] == h
}

// Follow ends this replica's leadership of id and of its parts, if it
// leads: they go on as followers of whoever leads at generation gen (0:
// not known yet).
func (n *Node) Follow(id cluster.ShardID, gen uint64) {
	var ended []*Leader
	n.mu.Lock()
	for _, h := range n.shardLocked(id) {
		if h.stopAdopt != nil {
			h.stopAdopt()
			h.stopAdopt = nil
		}
		if h.leader != nil {
			ended = append(ended, h.leader)
			h.leader = nil
		}
		h.assigned = max(h.assigned, gen)
	}
	n.mu.Unlock()
	for _, l := range ended {
		l.Depose()
		l.Close()
	}
}

// shardLocked is every log of id held here, the primary first. n.mu held.
func (n *Node) shardLocked(id cluster.ShardID) []*held {
	var out []*held
	if h := n.logs[logKey{id: id}]; h != nil {
		out = append(out, h)
	}
	return append(out, n.parts[id]...)
}

// Release stops holding id and its parts (the shard moved away or was
// deleted).
func (n *Node) Release(id cluster.ShardID) {
	n.Follow(id, 0)
	n.mu.Lock()
	hs := n.shardLocked(id)
	for _, h := range hs {
		delete(n.logs, logKey{id: id, part: h.part})
		n.refs.remove(h.ref)
	}
	delete(n.parts, id)
	n.mu.Unlock()
	for _, h := range hs {
		h.follower.Close()
	}
}

// ReleasePart stops holding one secondary part of id.
func (n *Node) ReleasePart(id cluster.ShardID, part string) {
	n.mu.Lock()
	k := logKey{id: id, part: part}
	h := n.logs[k]
	if h == nil || part == "" {
		n.mu.Unlock()
		return
	}
	delete(n.logs, k)
	n.refs.remove(h.ref)
	if h.stopAdopt != nil {
		h.stopAdopt()
	}
	n.parts[id] = slices.DeleteFunc(n.parts[id], func(p *held) bool { return p == h })
	if len(n.parts[id]) == 0 {
		delete(n.parts, id)
	}
	l := h.leader
	h.leader = nil
	n.mu.Unlock()
	if l != nil {
		l.Close() // not Depose: the lease is the primary's, which leads on
	}
	h.follower.Close()
}

// Leader is id's leadership on this broker, nil when it does not lead.
func (n *Node) Leader(id cluster.ShardID) *Leader { return n.PartLeader(id, "") }

// PartLeader is the leadership of one part of id on this broker, nil
// when it does not lead.
func (n *Node) PartLeader(id cluster.ShardID, part string) *Leader {
	n.mu.Lock()
	defer n.mu.Unlock()
	if h := n.logs[logKey{id: id, part: part}]; h != nil {
		return h.leader
	}
	return nil
}

// Follower is id's replica on this broker, nil when it holds none.
func (n *Node) Follower(id cluster.ShardID) *Follower {
	n.mu.Lock()
	defer n.mu.Unlock()
	if h := n.logs[logKey{id: id}]; h != nil {
		return h.follower
	}
	return nil
}

func (n *Node) lookup(r wire.LogRef) *held {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.refs.get(r)
}

// Close stops heartbeats, every leadership and every follower.
func (n *Node) Close() error {
	n.stop()
	close(n.done)
	n.wg.Wait()
	n.mu.Lock()
	logs := n.logs
	n.logs, n.refs, n.parts = map[logKey]*held{}, newRefIndex(), map[cluster.ShardID][]*held{}
	n.mu.Unlock()
	for _, h := range logs {
		if h.leader != nil {
			h.leader.Close()
		}
		h.follower.Close()
	}
	return nil
}
