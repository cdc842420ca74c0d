package client

import (
	"context"
	"testing"

	"github.com/felixbroker/felix/netio/wire"
)

// leanAcker acks every publish on shard 0 without allocating, so that
// AllocsPerRun (which counts the whole process) measures the client.
func leanAcker() func(fc *fakeConn, f wire.Frame) {
	var p wire.Publish
	var next uint64
	return func(fc *fakeConn, f wire.Frame) {
		if err := p.Decode(f, wire.Limits{}); err != nil {
			panic(err)
		}
		run := wire.AckRun{FirstOffset: next, Count: uint32(p.Count)}
		next += uint64(p.Count)
		fc.wmu.Lock()
		fc.out = wire.AppendPublishAck(fc.out[:0], f.RequestID, run)
		_, _ = fc.nc.Write(fc.out)
		fc.wmu.Unlock()
	}
}

func TestASynchronousPublishAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	b := newFakeBroker(t, leanAcker())
	c := dialFake(t, b, WithPingInterval(0))
	ctx := context.Background()
	value := make([]byte, 1024)
	key := []byte("user-1")
	recs := []Record{{Value: value}, {Key: key, Value: value}}
	publish := func() {
		if _, err := c.Publish(ctx, testStream, value, WithKey(key)); err != nil {
			t.Fatal(err)
		}
	}
	publish() // warm the pools and buffers
	if n := testing.AllocsPerRun(500, publish); n > 0 {
		t.Fatalf("Publish allocates %.1f times per call", n)
	}
	batch := func() {
		if _, err := c.PublishBatch(ctx, testStream, recs); err != nil {
			t.Fatal(err)
		}
	}
	batch()
	if n := testing.AllocsPerRun(500, batch); n > 1 {
		t.Fatalf("PublishBatch allocates %.1f times per call; want only its result", n)
	}
}
