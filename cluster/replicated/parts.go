package replicated

import (
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/replica"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/shardlog"
)

// The parts of replicated shards their owner packages hold
// (engine.PartReplication, engine/replication_part.go): a stream shard's
// group logs, which follow its records' leadership, and a cache shard's
// values (its primary, led externally) and counters.

// HoldPart registers a part with the node.
func (r *Replicas) HoldPart(p engine.PartLog) (engine.Part, error) {
	kind := cluster.KindStream
	if p.Cache {
		kind = cluster.KindCache
	}
	id := cluster.ShardID{Object: cluster.ObjectID{Kind: kind, Tenant: p.ID.Tenant, Namespace: p.ID.Namespace, Name: p.ID.Name},
		Shard: p.Shard}
	name, err := partName(p)
	if err != nil {
		return nil, err
	}
	cons := replica.ConsistencyLeader
	if p.Consistency == engine.ConsistencyQuorum {
		cons = replica.ConsistencyQuorum
	}
	cfg := replica.FollowerConfig{FS: p.FS, Dir: p.Dir, BootID: r.cfg.BootID, Logger: r.cfg.Logger}
	if name != "" {
		if err := r.cfg.Node.HoldPart(id, name, p.Log, cfg); err != nil {
			return nil, err
		}
		return &heldPart{r: r, id: id, name: name, consistency: cons}, nil
	}
	// A cache's values: the shard's primary, which the control plane
	// heartbeats, fences and promotes on.
	if err := r.cfg.Node.Hold(id, p.Log, cfg); err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.external[id] = externalLead{consistency: cons, onCommit: p.OnCommit}
	r.mu.Unlock()
	for _, ls := range r.cfg.View.Assigned() {
		if ls.Shard == id {
			if err := r.assignExternal(id, ls.Assignment); err != nil {
				r.cfg.Logger.Warn("replicated cache shard held; its role waits for the next reconcile", "shard", id.String(), "err", err)
			}
		}
	}
	return &heldPart{r: r, id: id, consistency: cons}, nil
}

// externalLead is how a cache shard's primary, held here, leads: at its
// cache's consistency, its commits handed to the cache (OnCommit).
type externalLead struct {
	consistency replica.Consistency
	onCommit    func(gen uint32, first, next int64, records []byte)
}

// partName is the part's name on the wire ("" for a shard's primary).
func partName(p engine.PartLog) (string, error) {
	switch {
	case p.Cache && p.Part == engine.PartCacheValues:
		return "", nil
	case p.Cache && p.Part == engine.PartCounters:
		return "counters", nil
	case !p.Cache && p.Part == engine.PartGroupCursors:
		return "group-cursors", nil
	case !p.Cache && p.Part == engine.PartDeadLetters:
		return "dead-letters", nil
	}
	return "", fmt.Errorf("felix/replicated: no part %d of a %s shard is replicated", p.Part, map[bool]string{true: "cache", false: "stream"}[p.Cache])
}

// assignExternal gives a cache shard's primary its role in a: it leads
// externally (the cache appends) where this broker is a's leader.
func (r *Replicas) assignExternal(id cluster.ShardID, a cluster.Assignment) error {
	me := r.cfg.Replica
	if a.Leader != me {
		r.cfg.Node.Follow(id, a.Generation)
		return nil
	}
	if l := r.cfg.Node.Leader(id); l != nil && uint64(l.Generation()) == a.Generation {
		return nil // leading already (the node did not end it: a fence or a later leader would have)
	}
	r.mu.Lock()
	x := r.external[id]
	r.mu.Unlock()
	o := replica.LeadOptions{Followers: followersOf(a, me), Joined: joinedOf(a), Consistency: x.consistency, Timeout: r.cfg.Timeout, External: true}
	if x.onCommit != nil && x.consistency == replica.ConsistencyQuorum {
		gen := uint32(a.Generation)
		o.OnCommit = func(first, next int64, records []byte) { x.onCommit(gen, first, next, records) }
	}
	_, err := r.cfg.Node.Lead(id, a.Generation, o)
	if err != nil {
		return fmt.Errorf("felix/replicated: leading %v at generation %d: %w", id, a.Generation, err)
	}
	return nil
}

// assignParts is assignRoles' step for the parts: the group logs of every
// replicated stream shard held here are held too (HoldGroups), and each
// cache primary takes its role.
func (r *Replicas) assignParts(local []Assigned) []error {
	var errs []error
	for _, ls := range local {
		r.mu.Lock()
		stream := r.shards[ls.Shard]
		_, cache := r.external[ls.Shard]
		hold := r.holdGroups
		r.mu.Unlock()
		switch {
		case stream != nil && hold != nil:
			if err := hold(stream.stream, stream.index); err != nil {
				errs = append(errs, fmt.Errorf("felix/replicated: holding the group logs of %v: %w", ls.Shard, err))
			}
		case cache:
			if err := r.assignExternal(ls.Shard, ls.Assignment); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errs
}

// heldPart is a part held through HoldPart.
type heldPart struct {
	r    *Replicas
	id   cluster.ShardID
	name string // "" for a cache's values, the shard's primary
	// consistency is the level the part's owner asked for: at Quorum its
	// writes are vouched by the leadership (Vouch).
	consistency replica.Consistency
	// last is the leadership Leading found last: asked again of the node
	// (under its broker-wide lock) only once it no longer serves.
	last atomic.Pointer[replica.Leader]
}

func (p *heldPart) leader() *replica.Leader { return p.r.cfg.Node.PartLeader(p.id, p.name) }

// Leading is the part's leadership on this broker, while it serves.
func (p *heldPart) Leading() (uint32, bool) {
	now := time.Now()
	if l := p.last.Load(); l != nil && l.Serving(now) {
		return l.Generation(), true
	}
	l := p.leader()
	if l == nil || !l.Serving(now) {
		return 0, false
	}
	p.last.Store(l)
	return l.Generation(), true
}

// Vouch tells w once the leadership at gen acknowledges up to last at the
// part's consistency (engine.Part).
func (p *heldPart) Vouch(gen uint32, first, last int64, w shardlog.Waiter) {
	if p.consistency != replica.ConsistencyQuorum {
		w.Committed(first, last, nil) // the Leader level: the owner's own log has it
		return
	}
	l := p.leader() // serving or not: a lapsed lease may yet be renewed before the write's deadline
	if l == nil || l.Generation() != gen {
		w.Committed(first, last, replica.ErrUnvouched)
		return
	}
	l.Vouch(first, last, w)
}

// leaderAt is the part's serving leadership at gen, nil when there is none.
func (p *heldPart) leaderAt(gen uint32) *replica.Leader {
	now := time.Now()
	if l := p.last.Load(); l != nil && l.Generation() == gen && l.Serving(now) {
		return l
	}
	if l := p.leader(); l != nil && l.Generation() == gen && l.Serving(now) {
		return l
	}
	return nil
}

// Commit is the commit watermark of the leadership at gen (engine.Part).
func (p *heldPart) Commit(gen uint32) (int64, bool) {
	l := p.leaderAt(gen)
	switch {
	case l == nil:
		return 0, false
	case p.consistency != replica.ConsistencyQuorum:
		return math.MaxInt64, true // no bound but the owner's own log's end
	}
	return l.Commit(), true
}

// Appended ships what the owner appended.
func (p *heldPart) Appended() {
	if l := p.leader(); l != nil {
		l.Appended()
	}
}

// CompactBelow is where every follower holds the part (0 on a follower).
func (p *heldPart) CompactBelow() int64 {
	if l := p.leader(); l != nil {
		return l.CompactBelow()
	}
	return 0
}

// Release stops replicating the part.
func (p *heldPart) Release() {
	if p.name != "" {
		p.r.cfg.Node.ReleasePart(p.id, p.name)
		return
	}
	p.r.mu.Lock()
	delete(p.r.external, p.id)
	p.r.mu.Unlock()
	p.r.cfg.Node.Release(p.id)
}
