package broker

import (
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/control"
	"github.com/felixbroker/felix/cluster/replica"
	"github.com/felixbroker/felix/engine"
)

// The parts of replicated shards their owner packages hold
// (engine.PartReplication, engine/replication_part.go): a stream shard's
// group logs, which follow its records' leadership, and a cache shard's
// values (its primary, led externally) and counters.

var _ engine.PartReplication = (*replicas)(nil)

// HoldPart registers a part with the node.
func (r *replicas) HoldPart(p engine.PartLog) (engine.Part, error) {
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
	cfg := replica.FollowerConfig{FS: p.FS, Dir: p.Dir, BootID: r.bootID, Logger: r.logger}
	if name != "" {
		if err := r.rn.HoldPart(id, name, p.Log, cfg); err != nil {
			return nil, err
		}
		return &heldPart{r: r, id: id, name: name}, nil
	}
	// A cache's values: the shard's primary, which the control plane
	// heartbeats, fences and promotes on.
	if err := r.rn.Hold(id, p.Log, cfg); err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.external[id] = true
	r.mu.Unlock()
	for _, ls := range r.n.view.Local() {
		if ls.Shard == id {
			if err := r.assignExternal(id, ls.Assignment); err != nil {
				r.logger.Warn("replicated cache shard held; its role waits for the next reconcile", "shard", id.String(), "err", err)
			}
		}
	}
	return &heldPart{r: r, id: id}, nil
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
	return "", fmt.Errorf("felix/broker: no part %d of a %s shard is replicated", p.Part, map[bool]string{true: "cache", false: "stream"}[p.Cache])
}

// assignExternal gives a cache shard's primary its role in a: it leads
// externally (the cache appends) where this broker is a's leader.
func (r *replicas) assignExternal(id cluster.ShardID, a cluster.Assignment) error {
	me := r.n.replica()
	if a.Leader != me {
		r.rn.Follow(id, a.Generation)
		return nil
	}
	if l := r.rn.Leader(id); l != nil && uint64(l.Generation()) == a.Generation {
		return nil // leading already (the node did not end it: a fence or a later leader would have)
	}
	_, err := r.rn.Lead(id, a.Generation, replica.LeadOptions{Followers: followersOf(a, me), Consistency: replica.ConsistencyLeader,
		Timeout: r.timeout, External: true})
	if err != nil {
		return fmt.Errorf("felix/broker: leading %v at generation %d: %w", id, a.Generation, err)
	}
	return nil
}

// followersOf is every replica of a but me, by broker id.
func followersOf(a cluster.Assignment, me cluster.Replica) []string {
	var out []string
	for _, rep := range a.Replicas {
		if rep != me {
			out = append(out, rep.Broker)
		}
	}
	return slices.Clip(out)
}

// assignParts is assignRoles' step for the parts: the group logs of every
// replicated stream shard held here are held too (HoldGroups), and each
// cache primary takes its role.
func (r *replicas) assignParts(local []control.LocalShard) []error {
	var errs []error
	for _, ls := range local {
		r.mu.Lock()
		stream, cache := r.shards[ls.Shard], r.external[ls.Shard]
		hold := r.holdGroups
		r.mu.Unlock()
		switch {
		case stream != nil && hold != nil:
			if err := hold(stream.stream, stream.index); err != nil {
				errs = append(errs, fmt.Errorf("felix/broker: holding the group logs of %v: %w", ls.Shard, err))
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
	r    *replicas
	id   cluster.ShardID
	name string // "" for a cache's values, the shard's primary
	// last is the leadership Leading found last: asked again of the node
	// (under its broker-wide lock) only once it no longer serves.
	last atomic.Pointer[replica.Leader]
}

func (p *heldPart) leader() *replica.Leader { return p.r.rn.PartLeader(p.id, p.name) }

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
		p.r.rn.ReleasePart(p.id, p.name)
		return
	}
	p.r.mu.Lock()
	delete(p.r.external, p.id)
	p.r.mu.Unlock()
	p.r.rn.Release(p.id)
}
