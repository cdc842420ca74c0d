package netio

import (
	"sync"
	"testing"

	"github.com/felixbroker/felix/engine/cache"
	"github.com/felixbroker/felix/netio/wire"
)

func (c *rawClient) counterAdd(ref wire.CacheRef, key string, delta int64) wire.Frame {
	return c.request(func(id uint64) []byte {
		return wire.AppendCounterAdd(nil, id, wire.CounterAdd{Cache: ref, Key: []byte(key), Delta: delta})
	})
}

func (c *rawClient) counterGet(ref wire.CacheRef, key string) wire.Frame {
	return c.request(func(id uint64) []byte {
		return wire.AppendCounterGet(nil, id, wire.CounterGet{Cache: ref, Key: []byte(key)})
	})
}

func TestCountersOverTheWireAnswerTheSumIncludingTheAdd(t *testing.T) {
	b := startCacheBroker(t)
	ref := b.createCache("c", cache.Config{Durable: true, Shards: 2})
	c := b.client(cacheFeaturesAll)
	if v := counterOf(t, c.counterGet(ref, "hits")); v.Exists || v.Sum != 0 || v.Offset != 0 {
		t.Fatalf("never written: %+v", v)
	}
	first := counterOf(t, c.counterAdd(ref, "hits", 5))
	if !first.Exists || first.Sum != 5 {
		t.Fatalf("first add: %+v", first)
	}
	if v := counterOf(t, c.counterAdd(ref, "hits", -5)); !v.Exists || v.Sum != 0 || v.Offset != first.Offset+1 {
		t.Fatalf("back to zero: %+v", v)
	}
	if v := counterOf(t, c.counterGet(ref, "hits")); !v.Exists || v.Sum != 0 {
		t.Fatalf("a sum of zero still exists: %+v", v)
	}
	// A counter and a value sharing a key are unrelated.
	c.mustPut(ref, "hits", "a value")
	if v := counterOf(t, c.counterGet(ref, "hits")); v.Sum != 0 {
		t.Fatalf("%+v", v)
	}
	errorOf(t, c.counterAdd(ref, "", 1), wire.CodeInvalidArgument)
	counterOf(t, c.counterAdd(ref, "big", 1<<62))
	if e := errorOf(t, c.counterAdd(ref, "big", 1<<62), wire.CodeInvalidArgument); e.Details.Field != "delta" {
		t.Fatalf("an overflow names the field %q", e.Details.Field)
	}
}

func TestConcurrentCounterAddsOverTheWireSumExactly(t *testing.T) {
	b := startCacheBroker(t)
	ref := b.createCache("c", cache.Config{Durable: true})
	const clients, adds = 4, 100
	sums := make(chan int64, clients*adds)
	var wg sync.WaitGroup
	for range clients {
		cl := b.client(cacheFeaturesAll)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range adds {
				sums <- counterOf(t, cl.counterAdd(ref, "n", 1)).Sum
			}
		}()
	}
	wg.Wait()
	close(sums)
	seen := map[int64]bool{}
	for s := range sums {
		if seen[s] {
			t.Fatalf("two adds answered the sum %d", s)
		}
		seen[s] = true
	}
	if v := counterOf(t, b.client(cacheFeaturesAll).counterGet(ref, "n")); v.Sum != clients*adds || len(seen) != clients*adds {
		t.Fatalf("sum %d after %d adds", v.Sum, len(seen))
	}
}

func TestCountersNeedADurableCache(t *testing.T) {
	b := startCacheBroker(t)
	ref := b.createCache("mem", cache.Config{Durable: false})
	c := b.client(cacheFeaturesAll)
	e := errorOf(t, c.counterAdd(ref, "k", 1), wire.CodeInvalidArgument)
	if e.Details.Field != "config.durable" {
		t.Fatalf("field %q", e.Details.Field)
	}
}
