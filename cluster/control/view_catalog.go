package control

import (
	"math"

	"github.com/felixbroker/felix/cluster"
)

// catalogObject is a catalog entry as the engine's catalogs serve it.
type catalogObject struct {
	Entry
	// Generation is the engine's leader epoch for the object's shards:
	// shard 0's assignment's generation when it is placed for the entry's
	// incarnation, else 1 (what a new shard starts at).
	Generation uint32
}

// catalogObject reads one entry (a copy) with its generation, under one
// read lock so the two agree.
func (v *View) catalogObject(id cluster.ObjectID) (catalogObject, bool) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	e, ok := v.state.objects[id]
	if !ok {
		return catalogObject{}, false
	}
	return catalogObject{Entry: e.clone(), Generation: v.state.generation(e)}, true
}

// catalogObjects reads every entry of one kind (copies), in no order.
func (v *View) catalogObjects(kind cluster.Kind) []catalogObject {
	v.mu.RLock()
	defer v.mu.RUnlock()
	var out []catalogObject
	for id, e := range v.state.objects {
		if id.Kind == kind {
			out = append(out, catalogObject{Entry: e.clone(), Generation: v.state.generation(e)})
		}
	}
	return out
}

// generation is catalogObject.Generation of e.
func (st *viewState) generation(e Entry) uint32 {
	a, ok := st.shards[cluster.ShardID{Object: e.Object}]
	if !ok || a.Assignment.Incarnation != e.Incarnation {
		return 1
	}
	return uint32(min(a.Assignment.Generation, math.MaxUint32))
}
