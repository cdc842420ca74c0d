package netio

import (
	"fmt"
	"testing"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/netio/wire"
)

func TestEachAckModeIsAnsweredAsItSays(t *testing.T) {
	b := startBroker(t)
	ref := b.createStream("orders", 4)
	c := b.client(wire.FeaturesAll)

	c.send(wire.AppendPublish(nil, 1, ref, wire.AckPerBatch, wire.Record{Value: []byte("one")}))
	if runs := ackOf(t, c.read()); len(runs) != 1 || runs[0] != (wire.AckRun{Shard: 0, FirstOffset: 0, Count: 1}) {
		t.Fatalf("per batch, one record: %+v", runs)
	}

	keyed := make([]wire.Record, 40)
	for i := range keyed {
		keyed[i] = wire.Record{Key: fmt.Appendf(nil, "user-%d", i), Value: value(i)}
	}
	c.send(wire.AppendPublishBatch(nil, 2, ref, wire.AckPerBatch, keyed))
	if runs := ackOf(t, c.read()); len(runs) < 2 || total(runs) != 40 {
		t.Fatalf("per batch, keyed across shards: %+v", runs)
	}

	c.send(wire.AppendPublishBatch(nil, 3, ref, wire.AckPerMessage, keyed))
	var got []wire.AckRun
	for total(got) < 40 {
		f := c.read()
		if f.RequestID != 3 {
			t.Fatalf("ack for request %d", f.RequestID)
		}
		runs := ackOf(t, f)
		if len(runs) != 1 {
			t.Fatalf("per message acks carry one run each, got %+v", runs)
		}
		got = append(got, runs...)
	}
	if total(got) != 40 || len(got) < 2 {
		t.Fatalf("per message: %+v", got)
	}

	c.send(wire.AppendPublishBatch(nil, 4, ref, wire.AckNone, keyed))
	if extra := c.ping(); len(extra) != 0 {
		t.Fatalf("ack none answered with %v", extra[0].Type)
	}
	sh, _ := mustStream(t, b, ref).Shard(0)
	if sh.End() == 0 {
		t.Fatal("nothing landed")
	}

	missing := wire.StreamRef{Tenant: []byte("acme"), Namespace: []byte("prod"), Stream: []byte("nope")}
	c.send(wire.AppendPublish(nil, 0, missing, wire.AckNone, wire.Record{Value: []byte("x")}))
	c.expectError(wire.CodeNotFound, 0)
	c.send(wire.AppendPublish(nil, 0, ref, wire.AckPerBatch, wire.Record{Value: []byte("x")}))
	c.expectError(wire.CodeInvalidArgument, 0)
	if n := b.s.Metrics().PublishResult(wire.CodeNotFound); n != 1 {
		t.Fatalf("not_found publishes counted %d", n)
	}
}

func total(runs []wire.AckRun) int {
	n := 0
	for _, r := range runs {
		n += int(r.Count)
	}
	return n
}

func mustStream(t testing.TB, b *testBroker, ref wire.StreamRef) *engine.Stream {
	t.Helper()
	st, err := b.e.Stream(idOf(ref))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestPublishesArePipelinedAndEachAckNamesItsRequest(t *testing.T) {
	b := startBroker(t)
	ref := b.createStream("pipelined", 3)
	c := b.client(wire.FeaturesAll)
	const n = 2000
	var frames []byte
	for i := range n {
		rec := wire.Record{Key: fmt.Appendf(nil, "k%d", i%17), Value: value(i)}
		frames = wire.AppendPublish(frames, uint64(i+1), ref, wire.AckPerBatch, rec)
	}
	c.send(frames) // every request before reading any answer
	seen := map[uint64]bool{}
	next := map[uint32]uint64{}
	for range n {
		f := c.read()
		runs := ackOf(t, f)
		if seen[f.RequestID] || f.RequestID == 0 || f.RequestID > n {
			t.Fatalf("ack for request %d twice or unknown", f.RequestID)
		}
		seen[f.RequestID] = true
		if runs[0].FirstOffset != next[runs[0].Shard] {
			t.Fatalf("shard %d acked offset %d, want %d (one connection's publishes keep their order per shard)",
				runs[0].Shard, runs[0].FirstOffset, next[runs[0].Shard])
		}
		next[runs[0].Shard]++
	}
}

func TestAKeyedRecordLandsOnOneShardWhetherSentBinaryOrAsJSON(t *testing.T) {
	b := startBroker(t)
	ref := b.createStream("keyed", 8)
	key := []byte("user-42")
	want := uint32(engine.ShardFor(key, 8))
	recs := []wire.Record{{Key: key, Value: []byte("binary")}}

	binary := b.client(wire.FeatureBinaryPublish | wire.FeaturePublishKeyed)
	binary.send(wire.AppendPublishFor(nil, wire.FeatureBinaryPublish|wire.FeaturePublishKeyed, 1, ref, wire.AckPerBatch, nil, recs))
	viaBinary := ackOf(t, binary.read())

	recs[0].Value = []byte("json")
	legacy := b.client(wire.FeatureBinaryPublish)
	legacy.send(wire.AppendPublishFor(nil, wire.FeatureBinaryPublish, 1, ref, wire.AckPerBatch, nil, recs))
	viaJSON := ackOf(t, legacy.read())

	if viaBinary[0].Shard != want || viaJSON[0].Shard != want || viaJSON[0].FirstOffset != viaBinary[0].FirstOffset+1 {
		t.Fatalf("binary %+v, json %+v, key's shard %d", viaBinary, viaJSON, want)
	}
	m := b.s.Metrics()
	if m.PublishJSON.Load() != 1 || m.PublishKeyedBinary.Load() != 1 {
		t.Fatalf("json %d, keyed binary %d", m.PublishJSON.Load(), m.PublishKeyedBinary.Load())
	}
	jsonConns, binaryConns := 0, 0
	for _, ci := range b.s.Connections() {
		if ci.PublishJSON == 1 && ci.Features == wire.FeatureBinaryPublish {
			jsonConns++
		}
		if ci.PublishBinary == 1 && ci.PublishJSON == 0 && ci.Features.Has(wire.FeaturePublishKeyed) {
			binaryConns++
		}
	}
	if jsonConns != 1 || binaryConns != 1 {
		t.Fatalf("connections: %+v", b.s.Connections())
	}
}

func TestAKeyedFrameWithoutTheKeyedFeatureIsRefusedAndTheSessionGoesOn(t *testing.T) {
	b := startBroker(t)
	ref := b.createStream("keyed", 2)
	c := b.client(wire.FeatureBinaryPublish)
	c.send(wire.AppendPublish(nil, 5, ref, wire.AckPerBatch, wire.Record{Key: []byte("k"), Value: []byte("v")}))
	e := c.expectError(wire.CodeFeatureNotNegotiated, 5)
	if e.Details.Feature != wire.FeaturePublishKeyed {
		t.Fatalf("details name %v", e.Details.Feature)
	}
	c.send(wire.AppendPublish(nil, 6, ref, wire.AckPerBatch, wire.Record{Value: []byte("v")}))
	ackOf(t, c.read())
}

func TestFramesOfFeaturesNotServedAreRefusedAsNotNegotiated(t *testing.T) {
	b := startBroker(t)
	c := b.client(wire.FeaturesAll)
	cache := wire.CacheRef{Tenant: []byte("a"), Namespace: []byte("b"), Cache: []byte("c")}
	c.send(wire.AppendCacheGet(nil, 8, wire.CacheGet{Cache: cache, Key: []byte("k")}))
	if e := c.expectError(wire.CodeFeatureNotNegotiated, 8); !e.Details.Feature.Has(wire.FeatureCache) {
		t.Fatalf("details %+v", e.Details)
	}
	c.send(wire.AppendControl(nil, 9, &wire.ProducerInit{Stream: wire.StreamRef{Tenant: []byte("a"), Namespace: []byte("b"), Stream: []byte("c")}}))
	c.expectError(wire.CodeFeatureNotNegotiated, 9)
	c.ping()
}

func TestARecordTooBigToDeliverIsRefused(t *testing.T) {
	b := startBroker(t, func(c *Config) { c.Limits.FrameBytesMax = 64 << 10 })
	ref := b.createStream("big", 1)
	c := b.client(wire.FeaturesAll)
	c.send(wire.AppendPublish(nil, 3, ref, wire.AckPerBatch, wire.Record{Value: make([]byte, 64<<10-eventFrameOverheadMax+1)}))
	e := c.expectError(wire.CodeLimitExceeded, 3)
	if e.Details.Limit != wire.LimitFrameBytes {
		t.Fatalf("details %+v", e.Details)
	}
	c.send(wire.AppendPublish(nil, 4, ref, wire.AckPerBatch, wire.Record{Value: make([]byte, 64<<10-eventFrameOverheadMax)}))
	ackOf(t, c.read())
}
