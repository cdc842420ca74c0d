package control

import (
	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/store"
)

// viewState is what a View holds, as of one revision.
type viewState struct {
	revision   int64
	brokers    map[string]cluster.Broker
	objects    map[cluster.ObjectID]Entry
	shards     map[cluster.ShardID]ShardAssignment
	unplaced   map[cluster.ObjectID]UnplacedReport
	candidates map[string]store.KV // the control plane's election keys
	// extent is, per object, one past the highest shard an assignment was
	// seen for (what the owners index spans).
	extent map[cluster.ObjectID]int
}

func newViewState() viewState {
	return viewState{
		brokers:    map[string]cluster.Broker{},
		objects:    map[cluster.ObjectID]Entry{},
		shards:     map[cluster.ShardID]ShardAssignment{},
		unplaced:   map[cluster.ObjectID]UnplacedReport{},
		candidates: map[string]store.KV{},
		extent:     map[cluster.ObjectID]int{},
	}
}

// apply takes one change, and returns the key it changed. What cannot be
// read is removed (so it is never served stale) and reported.
func (st *viewState) apply(ev store.Event) (parsedKey, error) {
	if ev.Kind == store.EventPut {
		return st.put(ev.KV)
	}
	k, err := parseKey(ev.KV.Key)
	if err == nil {
		st.remove(k, ev.KV.Key)
	}
	return k, err
}

// put takes a key's new value.
func (st *viewState) put(kv store.KV) (parsedKey, error) {
	k, err := parseKey(kv.Key)
	if err != nil {
		return k, err
	}
	switch k.kind {
	case keyBroker:
		err = st.putBroker(k.broker, kv)
	case keyCatalog:
		err = st.putEntry(k.shard.Object, kv)
	case keyAssignment:
		err = st.putAssignment(k.shard, kv)
	case keyUnplaced:
		err = st.putUnplaced(k.shard.Object, kv)
	case keyCandidate:
		st.candidates[kv.Key] = kv
	}
	if err != nil {
		st.remove(k, kv.Key)
	}
	return k, err
}

func (st *viewState) putBroker(id string, kv store.KV) error {
	b, err := decodeBroker(id, kv.Value)
	if err == nil {
		st.brokers[id] = b
	}
	return err
}

func (st *viewState) putEntry(id cluster.ObjectID, kv store.KV) error {
	e, err := decodeEntry(id, kv)
	if err == nil {
		st.objects[id] = e
	}
	return err
}

func (st *viewState) putAssignment(id cluster.ShardID, kv store.KV) error {
	a, err := decodeAssignment(id, kv)
	if err == nil {
		st.shards[id] = a
		st.extent[id.Object] = max(st.extent[id.Object], id.Shard+1)
	}
	return err
}

func (st *viewState) putUnplaced(id cluster.ObjectID, kv store.KV) error {
	u, err := decodeUnplaced(id, kv.Value)
	if err == nil {
		st.unplaced[id] = u
	}
	return err
}

// remove forgets a key.
func (st *viewState) remove(k parsedKey, key string) {
	switch k.kind {
	case keyBroker:
		delete(st.brokers, k.broker)
	case keyCatalog:
		delete(st.objects, k.shard.Object)
	case keyAssignment:
		delete(st.shards, k.shard)
	case keyUnplaced:
		delete(st.unplaced, k.shard.Object)
	case keyCandidate:
		delete(st.candidates, key)
	}
}

// live reports whether r's broker is registered on r's disk.
func (st *viewState) live(r cluster.Replica) bool {
	b, ok := st.brokers[r.Broker]
	return ok && b.DiskID == r.DiskID
}

// controlPlane is the election's leader: its oldest candidate.
func (st *viewState) controlPlane() (store.KV, bool) {
	var leader store.KV
	for _, kv := range st.candidates {
		if !leader.Exists() || kv.CreateRevision < leader.CreateRevision {
			leader = kv
		}
	}
	return leader, leader.Exists()
}
