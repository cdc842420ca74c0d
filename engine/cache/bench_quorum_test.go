package cache

import (
	"fmt"
	"testing"
	"time"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/segment/vfs"
)

// BenchmarkGetReplicated: a get of a replicated cache's key whose newest
// write is committed (so nothing to wait for), 256 B values over benchKeys
// keys on a memory file system, on the fake replication, one caller: the
// path every read takes when no write of its key is in flight, at Leader
// and at Quorum, through Get and (at Quorum the loop's call) GetAsync with
// no record.
func BenchmarkGetReplicated(b *testing.B) {
	for _, cons := range []engine.Consistency{engine.ConsistencyLeader, engine.ConsistencyQuorum} {
		for _, call := range []string{"Get", "GetAsync"} {
			b.Run(fmt.Sprintf("%s/%s", cons, call), func(b *testing.B) { benchGetReplicated(b, cons, call) })
		}
	}
}

func benchGetReplicated(b *testing.B, cons engine.Consistency, call string) {
	r := newFakeReplication()
	o := testOptions(vfs.NewMem(), nil)
	o.Replication, o.QuorumTimeout, o.CompactEvery = r, time.Minute, -1
	s := openStore(b, o)
	b.Cleanup(func() { s.Close() })
	if _, err := s.Create(cid, Config{Durable: true, ReplicationFactor: 3, Consistency: cons}); err != nil {
		b.Fatal(err)
	}
	r.leads(0, 1)
	c := mustCache(b, s)
	keys := benchKeyList()
	value := make([]byte, 256)
	done := make(chanWriter, len(keys))
	for _, k := range keys {
		if err := c.PutAsync(k, value, PutOptions{}, done); err != nil {
			b.Fatal(err)
		}
	}
	if cons == engine.ConsistencyQuorum {
		values := r.part(b, 0, engine.PartCacheValues)
		if err := values.pl.Log.Sync(); err != nil { // every put readable: the part may commit them
			b.Fatal(err)
		}
		for next := range len(keys) {
			values.commitTo(b, 1, int64(next+1))
		}
	}
	for range keys {
		if res := <-done; res.err != nil {
			b.Fatal(res.err)
		}
	}
	dst := make([]byte, 0, 1024)
	for _, k := range keys { // the value cache holds them
		if _, err := c.Get(k, dst[:0]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		k := keys[(i*7919)%len(keys)]
		var it Item
		var err error
		if call == "Get" {
			it, err = c.Get(k, dst[:0])
		} else {
			it, _, err = c.GetAsync(k, dst[:0], nil)
		}
		if err != nil || !it.Found {
			b.Fatal(it, err)
		}
	}
}
