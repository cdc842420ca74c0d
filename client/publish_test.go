package client

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

func TestPublishReturnsTheAcknowledgedPosition(t *testing.T) {
	b := newFakeBroker(t, ackingHandler())
	c := dialFake(t, b)
	ctx := testCtx(t)
	for want := range int64(3) {
		pos, err := c.Publish(ctx, testStream, []byte("v"))
		if err != nil {
			t.Fatal(err)
		}
		if pos != (Position{Shard: 0, Offset: want}) {
			t.Fatalf("publish %d landed at %+v", want, pos)
		}
	}
	runs, err := c.PublishBatch(ctx, testStream, []Record{{Value: []byte("a")}, {Value: []byte("b")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0] != (AckRun{Shard: 0, FirstOffset: 3, Count: 2}) {
		t.Fatalf("batch runs %+v", runs)
	}
}

// The broker answers a window of pipelined publishes in reverse order; each
// future gets the answer to its own request id.
func TestPipelinedPublishesMatchOutOfOrderAcksByRequestID(t *testing.T) {
	const n = 64
	var mu sync.Mutex
	var held []wire.Frame
	b := newFakeBroker(t, func(fc *fakeConn, f wire.Frame) {
		f.Body = append([]byte(nil), f.Body...)
		mu.Lock()
		held = append(held, f)
		all := len(held) == n
		mu.Unlock()
		if !all {
			return
		}
		for i := n - 1; i >= 0; i-- { // answer the last first
			var p wire.Publish
			if err := p.Decode(held[i], wire.Limits{}); err != nil {
				panic(err)
			}
			it := p.Records()
			it.Next()
			idx, _ := strconv.Atoi(string(it.Record().Value))
			fc.ack(held[i].RequestID, wire.AckRun{Shard: uint32(idx % 3), FirstOffset: uint64(1000 + idx), Count: 1})
		}
	})
	c := dialFake(t, b)
	ctx := testCtx(t)
	futures := make([]*PublishFuture, n)
	for i := range futures {
		futures[i] = c.PublishAsync(ctx, testStream, []byte(strconv.Itoa(i)))
	}
	for i, f := range futures {
		if _, err := f.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		pos, _ := f.Position()
		if want := (Position{Shard: i % 3, Offset: int64(1000 + i)}); pos != want {
			t.Fatalf("future %d completed with %+v, want %+v", i, pos, want)
		}
	}
	if got := c.Stats().Inflight; got != 0 {
		t.Fatalf("%d requests still in flight", got)
	}
}

func TestPerMessageAcksAreGatheredIntoOneResult(t *testing.T) {
	b := newFakeBroker(t, func(fc *fakeConn, f wire.Frame) {
		var p wire.Publish
		if err := p.Decode(f, wire.Limits{}); err != nil || p.Ack != wire.AckPerMessage || p.Count != 5 {
			fc.fail(f.RequestID, wire.CodeInvalidArgument, "want 5 records per message", wire.Details{})
			return
		}
		fc.ack(f.RequestID, wire.AckRun{Shard: 0, FirstOffset: 10, Count: 2})
		fc.ack(f.RequestID, wire.AckRun{Shard: 1, FirstOffset: 20, Count: 2})
		fc.ack(f.RequestID, wire.AckRun{Shard: 0, FirstOffset: 12, Count: 1})
	})
	c := dialFake(t, b)
	recs := make([]Record, 5)
	for i := range recs {
		recs[i] = Record{Key: []byte{byte(i)}, Value: []byte("v")}
	}
	runs, err := c.PublishBatch(testCtx(t), testStream, recs, WithAck(AckPerMessage))
	if err != nil {
		t.Fatal(err)
	}
	want := []AckRun{{0, 10, 2}, {1, 20, 2}, {0, 12, 1}}
	if len(runs) != len(want) {
		t.Fatalf("runs %+v, want %+v", runs, want)
	}
	for i := range want {
		if runs[i] != want[i] {
			t.Fatalf("runs %+v, want %+v", runs, want)
		}
	}
}

func TestAckNoneReturnsOnceSentAndReportsARefusalAsynchronously(t *testing.T) {
	refused := make(chan error, 1)
	b := newFakeBroker(t, func(fc *fakeConn, f wire.Frame) {
		var p wire.Publish
		_ = p.Decode(f, wire.Limits{})
		if p.Ack != wire.AckNone {
			fc.fail(f.RequestID, wire.CodeInvalidArgument, "expected ack none", wire.Details{})
			return
		}
		if f.RequestID == 0 {
			panic("an ack-none publish needs its own request id to be refused")
		}
		fc.fail(f.RequestID, wire.CodeForbidden, "no publish permission", wire.Details{})
	})
	c := dialFake(t, b, WithAsyncErrorHandler(func(err error) { refused <- err }))
	pos, err := c.Publish(testCtx(t), testStream, []byte("v"), WithAck(AckNone))
	if err != nil || pos != (Position{}) {
		t.Fatalf("ack-none publish: %+v, %v", pos, err)
	}
	select {
	case err := <-refused:
		if !errors.Is(err, ErrForbidden) {
			t.Fatalf("async error %v, want forbidden", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the refusal never reached the async error handler")
	}
}

// A keyed publish rides in the binary frame under FlagKeyed when both peers
// offer FeaturePublishKeyed, and as PUBLISH_JSON when either does not.
func TestKeyedPublishUsesTheBinaryFrameOnlyWhenNegotiated(t *testing.T) {
	cases := []struct {
		name           string
		client, broker wire.Features
		wantType       wire.Type
	}{
		{"both", wire.Features(DefaultFeatures), wire.FeaturesAll, wire.TypePublish},
		{"client without keyed", wire.FeatureBinaryPublish, wire.FeaturesAll, wire.TypePublishJSON},
		{"broker without keyed", wire.Features(DefaultFeatures), wire.FeatureBinaryPublish, wire.TypePublishJSON},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := newFakeBroker(t, ackingHandler())
			b.features = tc.broker
			seen := b.watch(16)
			c := dialFake(t, b, WithFeatures(Features(tc.client)))
			if _, err := c.Publish(testCtx(t), testStream, []byte("v"), WithKey([]byte("user-1"))); err != nil {
				t.Fatal(err)
			}
			f := next(t, seen)
			if f.Type != tc.wantType {
				t.Fatalf("keyed publish sent as %v, want %v", f.Type, tc.wantType)
			}
			var p wire.Publish
			if err := p.Decode(f, wire.Limits{}); err != nil {
				t.Fatal(err)
			}
			it := p.Records()
			it.Next()
			if r := it.Record(); string(r.Key) != "user-1" || string(r.Value) != "v" {
				t.Fatalf("record %q=%q", r.Key, r.Value)
			}
		})
	}
}

func TestExplicitTimestampsTravelWithTheRecords(t *testing.T) {
	b := newFakeBroker(t, ackingHandler())
	seen := b.watch(16)
	c := dialFake(t, b)
	ts := time.Unix(1700000000, 123456789)
	if _, err := c.Publish(testCtx(t), testStream, []byte("v"), WithTimestamp(ts)); err != nil {
		t.Fatal(err)
	}
	f := next(t, seen)
	var p wire.Publish
	if err := p.Decode(f, wire.Limits{}); err != nil {
		t.Fatal(err)
	}
	it := p.Records()
	it.Next()
	if !p.Timestamped || it.Record().Timestamp != ts.UnixNano() {
		t.Fatalf("timestamp %d, want %d", it.Record().Timestamp, ts.UnixNano())
	}
}

func TestABatchOverTheBrokersLimitsIsRefusedBeforeSending(t *testing.T) {
	b := newFakeBroker(t, ackingHandler())
	b.helloOK.Limits = wire.Limits{BatchRecordsMax: 3, KeyBytesMax: 8, FrameBytesMax: 4096}
	seen := b.watch(16)
	c := dialFake(t, b)
	ctx := testCtx(t)
	_, err := c.PublishBatch(ctx, testStream, make([]Record, 4))
	assertLocal(t, err, ErrLimitExceeded)
	_, err = c.Publish(ctx, testStream, []byte("v"), WithKey(bytes.Repeat([]byte("k"), 9)))
	assertLocal(t, err, ErrLimitExceeded)
	_, err = c.Publish(ctx, testStream, make([]byte, 4096))
	assertLocal(t, err, ErrFrameTooLarge)
	_, err = c.Publish(ctx, Stream{Tenant: string(make([]byte, 256)), Namespace: "n", Name: "s"}, nil)
	assertLocal(t, err, ErrLimitExceeded)
	if _, err := c.Publish(ctx, testStream, []byte("fits")); err != nil {
		t.Fatal(err)
	}
	if f := next(t, seen); f.Type != wire.TypePublish {
		t.Fatalf("the broker saw %v first; the refused publishes were sent", f.Type)
	}
	if _, err := c.PublishBatch(ctx, testStream, nil); !errors.Is(err, ErrEmptyBatch) {
		t.Fatalf("empty batch: %v", err)
	}
	if _, err := c.PublishBatch(ctx, testStream, make([]Record, 1), WithKey([]byte("k"))); !errors.Is(err, ErrOptionNotForBatch) {
		t.Fatalf("WithKey on a batch: %v", err)
	}
}

func assertLocal(t *testing.T, err, sentinel error) {
	t.Helper()
	var se *ServerError
	if !errors.As(err, &se) || !se.Local || !errors.Is(err, sentinel) {
		t.Fatalf("got %v, want a local %v", err, sentinel)
	}
}

// The broker allows two requests in flight; a third waits for a slot, and
// gives up with its context.
func TestTheBrokersInflightBoundHoldsBackFurtherRequests(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var held []uint64
	b := newFakeBroker(t, func(fc *fakeConn, f wire.Frame) {
		mu.Lock()
		held = append(held, f.RequestID)
		n := len(held)
		mu.Unlock()
		if n == 2 {
			go func() {
				<-release
				for _, id := range held {
					fc.ack(id, wire.AckRun{Count: 1})
				}
			}()
		}
	})
	b.helloOK.InflightRequestsMax = 2
	c := dialFake(t, b)
	ctx := testCtx(t)
	f1 := c.PublishAsync(ctx, testStream, []byte("1"))
	f2 := c.PublishAsync(ctx, testStream, []byte("2"))
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	f3 := c.PublishAsync(cancelled, testStream, []byte("3"))
	if _, err := f3.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("third publish: %v, want it to wait for a slot and give up", err)
	}
	close(release)
	for _, f := range []*PublishFuture{f1, f2} {
		if _, err := f.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := c.Stats().Inflight; got != 0 {
		t.Fatalf("%d slots still taken", got)
	}
}

func TestConcurrentPublishersShareOneConnection(t *testing.T) {
	b := newFakeBroker(t, ackingHandler())
	c := dialFake(t, b)
	ctx := testCtx(t)
	const writers, each = 8, 200
	offsets := make(chan int64, writers*each)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				var pos Position
				var err error
				if i%2 == 0 {
					pos, err = c.Publish(ctx, testStream, binary.LittleEndian.AppendUint32(nil, uint32(w)))
				} else {
					f := c.PublishAsync(ctx, testStream, []byte("x"))
					_, err = f.Wait(ctx)
					pos, _ = f.Position()
				}
				if err != nil {
					t.Error(err)
					return
				}
				offsets <- pos.Offset
			}
		})
	}
	wg.Wait()
	close(offsets)
	seen := map[int64]bool{}
	for o := range offsets {
		if seen[o] {
			t.Fatalf("offset %d acknowledged twice", o)
		}
		seen[o] = true
	}
	if len(seen) != writers*each || c.Stats().Connections != 1 {
		t.Fatalf("%d distinct offsets over %d connections", len(seen), c.Stats().Connections)
	}
}
