package client

import (
	"context"
	"testing"

	"github.com/felixbroker/felix/netio/wire"
)

// leadingMember is a fake broker that leads every shard of a stream of
// shards shards: it names itself in BROKER_LIST and in a describe, and
// acks publishes without allocating (leanAcker).
func leadingMember(t *testing.T, shards int) *fakeBroker {
	ack := leanAcker()
	var b *fakeBroker
	b = newFakeBroker(t, func(fc *fakeConn, f wire.Frame) {
		switch f.Type {
		case wire.TypeBrokerList:
			res := &wire.BrokerListResult{Brokers: []wire.BrokerInfo{{ID: "a", Addr: b.addr()}}}
			fc.sendWith(func(dst []byte) []byte { return wire.AppendControl(dst, f.RequestID, res) })
		case wire.TypeStreamDescribe:
			info := &wire.StreamInfo{Stream: testStream.ref(), Config: wire.StreamConfig{Shards: uint32(shards)}}
			for i := range shards {
				info.Shards = append(info.Shards, wire.ShardInfo{Shard: uint32(i), LeaderID: "a", LeaderAddr: b.addr()})
			}
			fc.sendWith(func(dst []byte) []byte { return wire.AppendControl(dst, f.RequestID, info) })
		default:
			ack(fc, f)
		}
	})
	return b
}

// On the steady path (the shard's leader known and its connection up) a
// cluster client's keyed Publish allocates nothing, as a Client's does.
func TestAClusterPublishAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	b := leadingMember(t, 4)
	c := dialFakeCluster(t, []string{b.addr()}, WithPingInterval(0))
	ctx := context.Background()
	value := make([]byte, 1024)
	key := []byte("user-1")
	publish := func() {
		if _, err := c.Publish(ctx, testStream, value, WithKey(key)); err != nil {
			t.Fatal(err)
		}
	}
	publish() // describe the stream, warm the pools
	if n := testing.AllocsPerRun(500, publish); n > 0 {
		t.Fatalf("ClusterClient.Publish allocates %.1f times per call", n)
	}
}
