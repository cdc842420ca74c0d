package e2e

import (
	"fmt"
	"testing"

	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/netio/wire"
)

const shards = 4

// TestKeysSpreadRecordsAcrossShards: distinct keys land on the shard
// xxh3(key) mod shards names, and between them reach every shard.
func TestKeysSpreadRecordsAcrossShards(t *testing.T) {
	b := newBroker(t)
	c := b.dial(t)
	ctx := testCtx(t)
	s := createStream(t, c, client.StreamConfig{Shards: shards})
	perShard := make([]int64, shards)
	for i := range 200 {
		key := fmt.Appendf(nil, "user-%d", i)
		pos, err := c.Publish(ctx, s, []byte("v"), client.WithKey(key))
		if err != nil {
			t.Fatal(err)
		}
		if want := engine.ShardFor(key, shards); pos.Shard != want {
			t.Fatalf("key %s landed on shard %d, want %d", key, pos.Shard, want)
		}
		if pos.Offset != perShard[pos.Shard] {
			t.Fatalf("key %s got offset %d on shard %d, want the next dense one, %d", key, pos.Offset, pos.Shard, perShard[pos.Shard])
		}
		perShard[pos.Shard]++
	}
	info, err := c.DescribeStream(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range perShard {
		if n == 0 {
			t.Fatalf("no record reached shard %d: %v", i, perShard)
		}
		if info.Shards[i].NextOffset != n {
			t.Fatalf("shard %d holds %d records, the acks said %d", i, info.Shards[i].NextOffset, n)
		}
	}
}

// TestOneKeyAlwaysLandsOnOneShard: one key resolves to one shard whatever
// the publish path (single, batch, async, per-message acks), and its
// records keep their order there.
func TestOneKeyAlwaysLandsOnOneShard(t *testing.T) {
	b := newBroker(t)
	c := b.dial(t)
	ctx := testCtx(t)
	s := createStream(t, c, client.StreamConfig{Shards: shards})
	key := []byte("user-42")
	want := engine.ShardFor(key, shards)
	sub, err := c.Subscribe(ctx, s, want, client.SubscribeOptions{Start: client.FromEarliest()})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	var sent [][]byte
	value := func() []byte {
		v := fmt.Appendf(nil, "%d", len(sent))
		sent = append(sent, v)
		return v
	}
	check := func(shard int) {
		t.Helper()
		if shard != want {
			t.Fatalf("key %s landed on shard %d, want %d", key, shard, want)
		}
	}
	for range 10 {
		pos, err := c.Publish(ctx, s, value(), client.WithKey(key))
		if err != nil {
			t.Fatal(err)
		}
		check(pos.Shard)
		recs := []client.Record{{Key: key, Value: value()}, {Key: key, Value: value()}}
		runs, err := c.PublishBatch(ctx, s, recs, client.WithAck(client.AckPerMessage))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			check(r.Shard)
		}
		f := c.PublishAsync(ctx, s, value(), client.WithKey(key))
		if _, err := f.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		pos, _ = f.Position()
		check(pos.Shard)
	}
	for i, v := range sent {
		ev, err := sub.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Shard != want || string(ev.Key) != string(key) || string(ev.Value) != string(v) || ev.Missed != 0 {
			t.Fatalf("event %d: shard %d key %s value %s missed %d; want shard %d value %s in order",
				i, ev.Shard, ev.Key, ev.Value, ev.Missed, want, v)
		}
	}
}

// TestAnUnkeyedPublishStillLandsOnShardZero: no key (or an empty one) on a
// multi-shard stream means shard 0, single or batched.
func TestAnUnkeyedPublishStillLandsOnShardZero(t *testing.T) {
	b := newBroker(t)
	c := b.dial(t)
	ctx := testCtx(t)
	s := createStream(t, c, client.StreamConfig{Shards: shards})
	pos, err := c.Publish(ctx, s, []byte("no key"))
	if err != nil || pos != (client.Position{Shard: 0, Offset: 0}) {
		t.Fatalf("unkeyed publish: %+v %v", pos, err)
	}
	pos, err = c.Publish(ctx, s, []byte("empty key"), client.WithKey([]byte{}))
	if err != nil || pos != (client.Position{Shard: 0, Offset: 1}) {
		t.Fatalf("empty-key publish: %+v %v", pos, err)
	}
	runs, err := c.PublishBatch(ctx, s, []client.Record{{Value: []byte("a")}, {Value: []byte("b")}, {Value: []byte("c")}})
	if err != nil || len(runs) != 1 || runs[0] != (client.AckRun{Shard: 0, FirstOffset: 2, Count: 3}) {
		t.Fatalf("unkeyed batch: %+v %v", runs, err)
	}
	info, err := c.DescribeStream(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, sh := range info.Shards[1:] {
		if sh.NextOffset != 0 {
			t.Fatalf("shard %d holds %d records; unkeyed records belong on shard 0", sh.Shard, sh.NextOffset)
		}
	}
}

// TestAKeyedPublishNegotiatesTheBinaryFrame: a client offering
// FeaturePublishKeyed (0x0040) sends keyed records in the binary frame
// under FLAG_BINARY_PUBLISH_KEYED; one that does not offer it gets the
// JSON encoding, and its records still land on the key's shard. Seen from
// both ends: the frames the client wrote, and the server's counters.
func TestAKeyedPublishNegotiatesTheBinaryFrame(t *testing.T) {
	b := newBroker(t)
	ctx := testCtx(t)
	key := []byte("user-7")
	want := engine.ShardFor(key, shards)

	binaryDial, binaryConn := recordingDialer()
	withKeyed := b.dial(t, binaryDial)
	s := createStream(t, withKeyed, client.StreamConfig{Shards: shards})
	sess, err := withKeyed.Session(ctx)
	if err != nil || !sess.Features.Has(client.FeaturePublishKeyed) {
		t.Fatalf("session features %v (%v), want publish_keyed", sess.Features, err)
	}
	m := b.metrics()
	jsonBefore, keyedBefore := m.PublishJSON.Load(), m.PublishKeyedBinary.Load()
	pos, err := withKeyed.Publish(ctx, s, []byte("binary"), client.WithKey(key))
	if err != nil || pos.Shard != want {
		t.Fatalf("keyed publish: %+v %v, want shard %d", pos, err, want)
	}
	if f := lastPublish(t, binaryConn); f.Type != wire.TypePublish || f.Flags&wire.FlagKeyed == 0 {
		t.Fatalf("the keyed publish went as %v flags %#x, want PUBLISH with 0x0040", f.Type, f.Flags)
	}
	if m.PublishKeyedBinary.Load() != keyedBefore+1 || m.PublishJSON.Load() != jsonBefore {
		t.Fatal("the server did not count one binary keyed publish and no JSON one")
	}

	jsonDial, jsonConn := recordingDialer()
	withoutKeyed := b.dial(t, jsonDial, client.WithFeatures(client.FeatureBinaryPublish))
	sess, err = withoutKeyed.Session(ctx)
	if err != nil || sess.Features.Has(client.FeaturePublishKeyed) {
		t.Fatalf("session features %v (%v), want no publish_keyed", sess.Features, err)
	}
	sub, err := withoutKeyed.Subscribe(ctx, s, want, client.SubscribeOptions{Start: client.FromEarliest()})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	pos, err = withoutKeyed.Publish(ctx, s, []byte("json"), client.WithKey(key))
	if err != nil || pos.Shard != want {
		t.Fatalf("keyed publish without the bit: %+v %v, want shard %d", pos, err, want)
	}
	if f := lastPublish(t, jsonConn); f.Type != wire.TypePublishJSON {
		t.Fatalf("without the bit the keyed publish went as %v, want PUBLISH_JSON", f.Type)
	}
	if m.PublishJSON.Load() != jsonBefore+1 {
		t.Fatalf("the server counted %d JSON publishes, want 1", m.PublishJSON.Load()-jsonBefore)
	}
	for _, v := range []string{"binary", "json"} {
		ev, err := sub.Next(ctx)
		if err != nil || string(ev.Value) != v || string(ev.Key) != string(key) || ev.Shard != want {
			t.Fatalf("shard %d delivered %q key %q (%v), want %q", want, ev.Value, ev.Key, err, v)
		}
	}
	// An unkeyed publish needs no keyed bit: it stays binary either way.
	if _, err := withoutKeyed.Publish(ctx, s, []byte("plain")); err != nil {
		t.Fatal(err)
	}
	if f := lastPublish(t, jsonConn); f.Type != wire.TypePublish || f.Flags&wire.FlagKeyed != 0 {
		t.Fatalf("an unkeyed publish went as %v flags %#x", f.Type, f.Flags)
	}
}

// lastPublish is the last publish frame the client wrote.
func lastPublish(t *testing.T, rec *recorder) wire.Frame {
	t.Helper()
	frames := rec.frames(t)
	for i := len(frames) - 1; i >= 0; i-- {
		switch frames[i].Type {
		case wire.TypePublish, wire.TypePublishBatch, wire.TypePublishJSON:
			return frames[i]
		}
	}
	t.Fatal("the client wrote no publish frame")
	return wire.Frame{}
}

// TestAnUnackedKeyedPublishReachesItsShard: with ack mode none nothing
// answers the publish, and the record still lands on its key's shard,
// where a subscriber sees it.
func TestAnUnackedKeyedPublishReachesItsShard(t *testing.T) {
	b := newBroker(t)
	c := b.dial(t)
	ctx := testCtx(t)
	s := createStream(t, c, client.StreamConfig{Shards: shards})
	for _, key := range [][]byte{[]byte("user-1"), []byte("user-2"), []byte("user-3")} {
		shard := engine.ShardFor(key, shards)
		sub, err := c.Subscribe(ctx, s, shard, client.SubscribeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pos, err := c.Publish(ctx, s, []byte("unacked"), client.WithKey(key), client.WithAck(client.AckNone))
		if err != nil || pos != (client.Position{}) {
			t.Fatalf("ack-none publish: %+v %v", pos, err)
		}
		ev, err := sub.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if int(ev.Shard) != shard || string(ev.Key) != string(key) || string(ev.Value) != "unacked" {
			t.Fatalf("shard %d got key %q value %q on shard %d", shard, ev.Key, ev.Value, ev.Shard)
		}
		_ = sub.Close()
	}
}
