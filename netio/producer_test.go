package netio

import (
	"context"
	"testing"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/producer"
	"github.com/felixbroker/felix/netio/wire"
)

func withProducers(cfg *Config) { cfg.Producers = producer.New(cfg.Engine, producer.Options{}) }

// initProducer sends PRODUCER_INIT and returns the producer's id and epoch.
func (c *rawClient) initProducer(ref wire.StreamRef, shard uint32) wire.ProducerSeq {
	c.t.Helper()
	ok := decodeControl[wire.ProducerInitOK](c.t, c.control(&wire.ProducerInit{Stream: ref, Shard: shard}))
	return wire.ProducerSeq{Shard: shard, ProducerID: ok.ProducerID, Epoch: ok.Epoch}
}

// sendBatch sends PUBLISH_IDEMPOTENT and returns the answer.
func (c *rawClient) sendBatch(ref wire.StreamRef, seq wire.ProducerSeq, values ...string) wire.Frame {
	c.t.Helper()
	recs := make([]wire.Record, len(values))
	for i, v := range values {
		recs[i] = wire.Record{Value: []byte(v)}
	}
	id := c.id()
	c.send(wire.AppendPublishIdempotent(nil, id, ref, seq, recs))
	f := c.read()
	if f.RequestID != id {
		c.t.Fatalf("answer to %d carries %d", id, f.RequestID)
	}
	return f
}

func idempotentAckOf(t testing.TB, f wire.Frame) wire.IdempotentAck {
	t.Helper()
	if f.Type != wire.TypePublishIdempotentAck {
		t.Fatalf("want PUBLISH_IDEMPOTENT_ACK, got %v: %v", f.Type, decodeErr(f))
	}
	var a wire.IdempotentAck
	if err := a.Decode(f, wire.Limits{}); err != nil {
		t.Fatal(err)
	}
	return a
}

func TestProducerFramesAreRefusedWithoutProducers(t *testing.T) {
	b := startBroker(t)
	c := b.dial()
	if ok := c.hello(wire.FeaturesAll, nil); ok.Features.Has(wire.FeatureIdempotentProducers) {
		t.Fatal("a broker without producers offered idempotent_producers")
	}
	ref := b.createStream("plain", 1)
	id := c.id()
	c.send(wire.AppendControl(nil, id, &wire.ProducerInit{Stream: ref}))
	c.expectError(wire.CodeFeatureNotNegotiated, id)
}

func TestIdempotentBatchIsAnsweredOnceFromTheLogThenFromMemory(t *testing.T) {
	b := startBroker(t, withProducers)
	c := b.client(wire.FeaturesAll)
	ref := b.createStream("orders", 2)
	seq := c.initProducer(ref, 0)
	first := idempotentAckOf(t, c.sendBatch(ref, seq, "a", "b"))
	if first.Duplicate || first.Count != 2 || first.FirstOffset != 0 || first.ProducerSeq != seq {
		t.Fatalf("first send: %+v", first)
	}
	again := idempotentAckOf(t, c.sendBatch(ref, seq, "a", "b"))
	if !again.Duplicate || again.FirstOffset != first.FirstOffset || again.Count != 2 {
		t.Fatalf("re-send: %+v", again)
	}
	sh, _ := mustStream(t, b, ref).Shard(0)
	if sh.End() != 2 {
		t.Fatalf("the shard holds %d records, want 2", sh.End())
	}
	// PUBLISH_JSON carrying the producer is the same batch stream.
	seq.Sequence = 1
	id := c.id()
	c.send(wire.AppendPublishJSON(nil, id, ref, wire.AckPerBatch, &seq, []wire.Record{{Value: []byte("c")}}))
	if a := idempotentAckOf(t, c.read()); a.Duplicate || a.FirstOffset != 2 || a.Sequence != 1 {
		t.Fatalf("JSON batch: %+v", a)
	}
	// A batch names its shard, and its keys must choose it: a record
	// without a key belongs to shard 0.
	other := c.initProducer(ref, 1)
	if e := decodeErr(c.sendBatch(ref, other, "unkeyed")); e == nil || e.Code != wire.CodeInvalidArgument || e.Details.Field != "key" {
		t.Fatalf("an unkeyed batch to shard 1: %v", e)
	}
	key := keyFor(1, 2)
	id = c.id()
	c.send(wire.AppendPublishIdempotent(nil, id, ref, other, []wire.Record{{Key: key, Value: []byte("keyed")}}))
	if a := idempotentAckOf(t, c.read()); a.Shard != 1 || a.FirstOffset != 0 {
		t.Fatalf("a keyed batch to its shard: %+v", a)
	}
}

// keyFor finds a key that routes to shard of shards.
func keyFor(shard, shards int) []byte {
	for i := 0; ; i++ {
		k := []byte("key-" + string(rune('a'+i%26)) + string(rune('a'+i/26)))
		if engine.ShardFor(k, shards) == shard {
			return k
		}
	}
}

func TestAGapIsRefusedWithTheExpectedSequenceOverTheWire(t *testing.T) {
	b := startBroker(t, withProducers)
	c := b.client(wire.FeaturesAll)
	ref := b.createStream("gaps", 1)
	seq := c.initProducer(ref, 0)
	idempotentAckOf(t, c.sendBatch(ref, seq, "0"))
	seq.Sequence = 3
	f := c.sendBatch(ref, seq, "3")
	e := decodeErr(f)
	if e == nil || e.Code != wire.CodeSequenceGap || e.Details.ExpectedSequence == nil || *e.Details.ExpectedSequence != 1 {
		t.Fatalf("a gap: %v", e)
	}
}

func TestAnUnknownProducerIsRefused(t *testing.T) {
	b := startBroker(t, withProducers)
	c := b.client(wire.FeaturesAll)
	ref := b.createStream("unknown", 1)
	seq := c.initProducer(ref, 0)
	for name, bad := range map[string]wire.ProducerSeq{
		"another epoch":  {ProducerID: seq.ProducerID, Epoch: seq.Epoch + 1},
		"another number": {ProducerID: seq.ProducerID + 100, Epoch: seq.Epoch},
	} {
		if e := decodeErr(c.sendBatch(ref, bad, "x")); e == nil || e.Code != wire.CodeProducerUnknown {
			t.Errorf("%s: %v", name, e)
		}
	}
}

func TestAProducerIsUnknownToTheNextIncarnation(t *testing.T) {
	e, err := engine.Open(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	first := startBrokerOn(t, e, withProducers)
	ref := first.createStream("restart", 1)
	c := first.client(wire.FeaturesAll)
	seq := c.initProducer(ref, 0)
	idempotentAckOf(t, c.sendBatch(ref, seq, "x"))
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := first.s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	second := startBrokerOn(t, e, withProducers)
	c2 := second.client(wire.FeaturesAll)
	if e := decodeErr(c2.sendBatch(ref, seq, "x")); e == nil || e.Code != wire.CodeProducerUnknown {
		t.Fatalf("a re-send to the next incarnation: %v", e)
	}
}

func TestProducerInitNeedsALedShard(t *testing.T) {
	b := startBroker(t, withProducers)
	c := b.client(wire.FeaturesAll)
	ref := b.createStream("init", 2)
	id := c.id()
	c.send(wire.AppendControl(nil, id, &wire.ProducerInit{Stream: ref, Shard: 5}))
	if e := c.expectError(wire.CodeInvalidArgument, id); e.Details.Field != "shard" {
		t.Fatalf("no such shard: %v", e)
	}
	id = c.id()
	c.send(wire.AppendControl(nil, id, &wire.ProducerInit{Stream: wireRef(engine.StreamID{Tenant: "acme", Namespace: "prod", Name: "none"})}))
	c.expectError(wire.CodeNotFound, id)
}
