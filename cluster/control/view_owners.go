package control

import (
	"maps"

	"github.com/felixbroker/felix/cluster"
)

// owners is the index Leader, Holds and LeaderBroker read without a lock:
// for each object name, the objects of that name and, per shard, their
// answers. It is immutable once published: the View's goroutine builds the
// next one after each batch of changes, rebuilding only the objects whose
// assignments or catalog entry the batch touched (all of them when a
// registration changed, since the leaders' addresses come from the
// registrations).
type owners map[string][]*objectOwners

type objectOwners struct {
	id     cluster.ObjectID
	shards []owner // by shard number; the zero owner: not known here
}

// owner is the answers for one shard.
type owner struct {
	local  bool   // this broker's replica leads it
	held   bool   // this broker's replica is one of its replicas, placed for the catalog's incarnation
	addr   string // the leader's client address, when another broker leads and is registered on its disk
	broker string // that leader's broker id, beside addr
}

// of is the answer for one shard; the zero owner when nothing is known.
func (o owners) of(id cluster.ShardID) owner {
	for _, obj := range o[id.Object.Name] {
		if obj.id == id.Object {
			if id.Shard >= 0 && id.Shard < len(obj.shards) {
				return obj.shards[id.Shard]
			}
			break
		}
	}
	return owner{}
}

// buildOwners indexes every object's assignments.
func buildOwners(st *viewState, local cluster.Replica) owners {
	o := owners{}
	for id := range st.extent {
		o.set(id, st.objectOwners(id, local))
	}
	return o
}

// with is o with the touched objects rebuilt from st.
func (o owners) with(st *viewState, local cluster.Replica, touched map[cluster.ObjectID]bool) owners {
	next := maps.Clone(o)
	for id := range touched {
		next.set(id, st.objectOwners(id, local))
	}
	return next
}

// set replaces one object's entry (removes it, for nil), copying the slice
// of its name's objects so the published index is never written.
func (o owners) set(id cluster.ObjectID, obj *objectOwners) {
	var same []*objectOwners
	for _, other := range o[id.Name] {
		if other.id != id {
			same = append(same, other)
		}
	}
	if obj != nil {
		same = append(same, obj)
	}
	if len(same) == 0 {
		delete(o, id.Name)
		return
	}
	o[id.Name] = same
}

// objectOwners is one object's answers; nil when none of its shards has
// an assignment.
func (st *viewState) objectOwners(id cluster.ObjectID, local cluster.Replica) *objectOwners {
	obj := &objectOwners{id: id, shards: make([]owner, st.extent[id])}
	known := false
	for i := range obj.shards {
		if a, ok := st.shards[cluster.ShardID{Object: id, Shard: i}]; ok {
			obj.shards[i], known = st.ownerOf(a.Assignment.Leader, local), true
			obj.shards[i].held = st.holds(a, local)
		}
	}
	if !known {
		return nil
	}
	return obj
}

// holds reports whether local holds a replica of the shard: it is in the
// assignment, and the assignment was placed for the incarnation of the
// object the catalog holds now (one placed for an incarnation deleted
// since is about to go, and its data with it).
func (st *viewState) holds(a ShardAssignment, local cluster.Replica) bool {
	e, ok := st.objects[a.Shard.Object]
	return ok && e.Incarnation == a.Assignment.Incarnation && a.Assignment.Holds(local)
}

// ownerOf is Leader's (and LeaderBroker's) answer for a shard led by
// leader.
func (st *viewState) ownerOf(leader, local cluster.Replica) owner {
	switch {
	case leader == (cluster.Replica{}):
		return owner{}
	case leader == local:
		return owner{local: true}
	case st.live(leader):
		return owner{addr: st.brokers[leader.Broker].ClientAddr, broker: leader.Broker}
	}
	return owner{}
}
