package netio

import (
	"bytes"
	"testing"

	"github.com/felixbroker/felix/netio/wire"
)

// A keyed publish to "a" spanning both shards: "a" appends shard 1's part
// (it leads it) and forwards shard 0's to "b"; the one PUBLISH_ACK names
// both runs, and each part is in its leader's log, and only there.
func TestAPublishSpanningShardsIsAckedWithTheRunsOfBothLeaders(t *testing.T) {
	c := newCluster(t)
	ref := c.createStream("orders")
	a, b := c.m["a"], c.m["b"]
	recs := []wire.Record{
		{Key: keyOn(0, 0), Value: []byte("to b 0")},
		{Key: keyOn(1, 0), Value: []byte("to a 0")},
		{Key: keyOn(0, 1), Value: []byte("to b 1")},
	}
	cl := a.client(nil)
	for round := range 2 {
		runs := ackOf(t, cl.publishKeyed(ref, recs))
		want := []wire.AckRun{{Shard: 0, FirstOffset: uint64(2 * round), Count: 2}, {Shard: 1, FirstOffset: uint64(round), Count: 1}}
		if len(runs) != 2 || runs[0] != want[0] || runs[1] != want[1] {
			t.Fatalf("round %d: runs %+v, want %+v", round, runs, want)
		}
	}
	if got := [4]int64{b.shardEnd(ref, 0), a.shardEnd(ref, 1), a.shardEnd(ref, 0), b.shardEnd(ref, 1)}; got != [4]int64{4, 2, 0, 0} {
		t.Fatalf("shard ends (b0, a1, a0, b1) = %v", got)
	}
	if m := a.fwd.Metrics(); m.Sent.Load() != 2 || m.Answered.Load() != 2 || m.Refused.Load() != 0 {
		t.Fatalf("forwarder: sent %d answered %d refused %d", m.Sent.Load(), m.Answered.Load(), m.Refused.Load())
	}
	if n := b.s.Metrics().RelayRequests.Load(); n != 2 {
		t.Fatalf("b relayed %d requests", n)
	}
	// b's client sees shard 0's records where they were published from a.
	sub := b.client(nil)
	sub.subscribe(wire.Subscribe{Stream: ref, Start: wire.Start{From: wire.StartEarliest}})
	evs := sub.events(4)
	if !bytes.Equal(evs[0].Key, recs[0].Key) || string(evs[1].Value) != "to b 1" {
		t.Fatalf("events at b: %+v", evs)
	}
}

// A cache put through "a" for a key "b" leads is b's: readable through b
// directly and through a (a forwarded get); a forwarded delete removes it.
func TestACacheWriteThroughANonLeaderLandsOnTheLeader(t *testing.T) {
	c := newCluster(t)
	ref := c.createCache("sessions")
	a, b := c.m["a"], c.m["b"]
	key := keyOn(0, 0)
	ca, cb := a.client(nil), b.client(nil)
	w := writtenOf(t, ca.put(wire.CachePut{Cache: ref, Key: key, Value: []byte("v1")}))
	if got := valueOf(t, cb.get(ref, string(key))); !got.Found || string(got.Value) != "v1" || got.Offset != w.Offset {
		t.Fatalf("at b: %+v (written %+v)", got, w)
	}
	if got := valueOf(t, ca.get(ref, string(key))); !got.Found || string(got.Value) != "v1" {
		t.Fatalf("through a: %+v", got)
	}
	if item, err := a.store.Cache(cacheIDOf(ref)); err != nil {
		t.Fatal(err)
	} else if got, err := item.Get(key, nil); err == nil && got.Found {
		t.Fatalf("a holds the key itself: %+v", got)
	}
	if d := writtenOf(t, ca.del(wire.CacheDelete{Cache: ref, Key: key})); !d.Existed {
		t.Fatalf("forwarded delete: %+v", d)
	}
	if got := valueOf(t, cb.get(ref, string(key))); got.Found {
		t.Fatalf("deleted, still at b: %+v", got)
	}
	// A key a leads is a's own, answered without a FORWARD.
	sent := a.fwd.Metrics().Sent.Load()
	writtenOf(t, ca.put(wire.CachePut{Cache: ref, Key: keyOn(1, 0), Value: []byte("here")}))
	if a.fwd.Metrics().Sent.Load() != sent {
		t.Fatal("a put for a's own shard was forwarded")
	}
}

// Counter adds through both brokers sum on the leader; a get through
// either says the same.
func TestCounterAddsThroughEitherBrokerSumOnTheLeader(t *testing.T) {
	c := newCluster(t)
	ref := c.createCache("hits")
	ca, cb := c.m["a"].client(nil), c.m["b"].client(nil)
	key := string(keyOn(0, 2))
	if v := counterOf(t, ca.counterAdd(ref, key, 5)); v.Sum != 5 {
		t.Fatalf("first add: %+v", v)
	}
	if v := counterOf(t, cb.counterAdd(ref, key, 2)); v.Sum != 7 {
		t.Fatalf("add at the leader: %+v", v)
	}
	if v := counterOf(t, ca.counterAdd(ref, key, -1)); v.Sum != 6 {
		t.Fatalf("second forwarded add: %+v", v)
	}
	for name, cl := range map[string]*rawClient{"a": ca, "b": cb} {
		if v := counterOf(t, cl.counterGet(ref, key)); !v.Exists || v.Sum != 6 {
			t.Fatalf("get through %s: %+v", name, v)
		}
	}
}
