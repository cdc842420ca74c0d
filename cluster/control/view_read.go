package control

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/cache"
)

var _ engine.Ownership = (*View)(nil)

// Leader implements engine.Ownership: whether this broker's replica leads
// the shard, and otherwise the leader's client address for a redirect ("",
// when the shard has no assignment or no leader, or its leader's broker is
// not registered on the leader's disk). A cache's shards are asked for
// under cache.ID.OwnershipID. It takes no lock and allocates nothing: it
// reads the index published after the last batch of changes.
func (v *View) Leader(id engine.StreamID, shard int) (bool, string) {
	o := v.owners.Load().of(ownershipShard(id, shard))
	return o.local, o.addr
}

// ownershipShard is the shard an engine.Ownership question is about.
func ownershipShard(id engine.StreamID, shard int) cluster.ShardID {
	o := cluster.ObjectID{Kind: cluster.KindStream, Tenant: id.Tenant, Namespace: id.Namespace, Name: id.Name}
	if name, ok := strings.CutPrefix(id.Name, cache.OwnershipPrefix); ok {
		o.Kind, o.Name = cluster.KindCache, name
	}
	return cluster.ShardID{Object: o, Shard: shard}
}

// LocalShard is a shard this broker holds a replica of.
type LocalShard struct {
	ShardAssignment
	Leader bool  // this broker's replica leads it
	Entry  Entry // its object's catalog entry: what to open the shard with
}

// Local lists the shards this broker (on its current disk) holds a
// replica of, in shard order: those whose object is in the catalog at the
// incarnation they were placed for. The caller owns the slice.
func (v *View) Local() []LocalShard {
	v.mu.RLock()
	defer v.mu.RUnlock()
	var out []LocalShard
	for _, a := range v.state.shards {
		e, ok := v.state.objects[a.Shard.Object]
		if !ok || e.Incarnation != a.Assignment.Incarnation || !a.Assignment.Holds(v.cfg.Local) {
			continue
		}
		a.Assignment = a.Assignment.Clone()
		out = append(out, LocalShard{ShardAssignment: a, Leader: a.Assignment.Leader == v.cfg.Local, Entry: e.clone()})
	}
	slices.SortFunc(out, func(a, b LocalShard) int { return compareShards(a.Shard, b.Shard) })
	return out
}

// Entry reads an object's catalog entry (a copy).
func (v *View) Entry(id cluster.ObjectID) (Entry, bool) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	e, ok := v.state.objects[id]
	return e.clone(), ok
}

// Status is the cluster as a View last saw it, for `felix cluster
// status`. The caller owns it.
type Status struct {
	Revision int64 // the store's revision the view has read up to
	// ControlPlane is the id of the broker whose control plane leads, and
	// Epoch its election revision; "" and 0 while none does.
	ControlPlane string
	Epoch        int64
	Brokers      []cluster.Broker // registered, by id
	Objects      []Entry          // the catalog, in order
	Shards       []ShardStatus    // every stored assignment, in order
	Unplaced     []UnplacedReport // objects the control plane could not place, in order
}

// ShardStatus is one shard's stored assignment and which of its replicas
// are live.
type ShardStatus struct {
	ShardAssignment
	LeaderLive bool // the leader's broker is registered on the leader's disk
	Live       int  // replicas whose broker is registered on their disk
}

// Status copies what the view holds.
func (v *View) Status() Status {
	v.mu.RLock()
	defer v.mu.RUnlock()
	st := &v.state
	out := Status{Revision: st.revision, Brokers: st.brokerList()}
	if kv, ok := st.controlPlane(); ok {
		out.ControlPlane, out.Epoch = string(kv.Value), kv.CreateRevision
	}
	for _, id := range slices.SortedFunc(maps.Keys(st.objects), compareObjects) {
		out.Objects = append(out.Objects, st.objects[id].clone())
	}
	for _, id := range slices.SortedFunc(maps.Keys(st.shards), compareShards) {
		out.Shards = append(out.Shards, shardStatus(st, st.shards[id]))
	}
	for _, id := range slices.SortedFunc(maps.Keys(st.unplaced), compareObjects) {
		out.Unplaced = append(out.Unplaced, st.unplaced[id])
	}
	return out
}

func shardStatus(st *viewState, a ShardAssignment) ShardStatus {
	a.Assignment = a.Assignment.Clone()
	s := ShardStatus{ShardAssignment: a, LeaderLive: st.live(a.Assignment.Leader)}
	for _, r := range a.Assignment.Replicas {
		if st.live(r) {
			s.Live++
		}
	}
	return s
}

func compareObjects(a, b cluster.ObjectID) int {
	return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Tenant, b.Tenant),
		cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}

func compareShards(a, b cluster.ShardID) int {
	return cmp.Or(compareObjects(a.Object, b.Object), cmp.Compare(a.Shard, b.Shard))
}

// Brokers lists the registered brokers, by id: what a client asking a
// broker for the cluster's brokers (BROKER_LIST) is told. Unlike Status it
// copies nothing of the catalog.
func (v *View) Brokers() []cluster.Broker {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.state.brokerList()
}

func (st *viewState) brokerList() []cluster.Broker {
	var out []cluster.Broker
	for _, id := range slices.Sorted(maps.Keys(st.brokers)) {
		out = append(out, st.brokers[id])
	}
	return out
}

// ControlPlane is the id of the broker whose control plane leads now and
// its epoch (election revision); "" and 0 while none does. Brokers send
// their heartbeats there.
func (v *View) ControlPlane() (string, int64) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	if kv, ok := v.state.controlPlane(); ok {
		return string(kv.Value), kv.CreateRevision
	}
	return "", 0
}
