package replica

import (
	"strings"
	"testing"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/netio/wire"
)

// The index tells apart refs whose names run together the same (a
// tenant's end could be a namespace's start), parts, shards and kinds,
// takes a frame's ref (its names decoded into []byte) for the one held,
// and forgets a ref removed.
func TestTheRefIndexFindsEachLogByItsOwnRef(t *testing.T) {
	id := func(kind cluster.Kind, tenant, namespace string, shard int) cluster.ShardID {
		return cluster.ShardID{Object: cluster.ObjectID{Kind: kind, Tenant: tenant, Namespace: namespace, Name: "orders"}, Shard: shard}
	}
	refs := []wire.LogRef{
		RefOf(id(cluster.KindStream, "ab", "c", 0)),
		RefOf(id(cluster.KindStream, "a", "bc", 0)),
		RefOf(id(cluster.KindStream, "a", "bc", 1)),
		RefOf(id(cluster.KindCache, "a", "bc", 1)),
		RefOfPart(id(cluster.KindStream, "a", "bc", 1), "groups"),
		RefOf(id(cluster.KindStream, strings.Repeat("t", 255), strings.Repeat("n", 255), 7)),
	}
	x := newRefIndex()
	logs := make([]*held, len(refs))
	for i, r := range refs {
		logs[i] = &held{ref: r}
		x.put(r, logs[i])
	}
	for i, r := range refs {
		framed := cloneRef(r) // as a frame's decode gives it: other memory
		if got := x.get(framed); got != logs[i] {
			t.Errorf("%v: found %v, want its own", r, got)
		}
	}
	empty := refs[0]
	empty.Part = []byte{} // an empty part is the primary, as no part is
	if got := x.get(empty); got != logs[0] {
		t.Errorf("%v with an empty part: found %v, want the primary", empty, got)
	}
	x.remove(refs[1])
	if got := x.get(refs[1]); got != nil {
		t.Errorf("%v removed: found %v", refs[1], got)
	}
	if got := x.get(refs[2]); got != logs[2] {
		t.Errorf("%v, after another was removed: found %v, want its own", refs[2], got)
	}
}

// A lookup by a ref whose names are longer than Go converts to a string
// on the stack (32 bytes) allocates nothing: a follower looks up every
// REPLICATE's log so.
func TestALookupByALongRefAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	ref := RefOf(cluster.ShardID{Object: cluster.ObjectID{Kind: cluster.KindStream, Tenant: strings.Repeat("t", 40),
		Namespace: strings.Repeat("n", 40), Name: strings.Repeat("o", 40)}})
	x := newRefIndex()
	h := &held{ref: ref}
	x.put(ref, h)
	if n := testing.AllocsPerRun(100, func() {
		if x.get(ref) != h {
			t.Fatal("not found")
		}
	}); n != 0 {
		t.Errorf("%v allocations per lookup", n)
	}
}
