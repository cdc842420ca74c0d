package e2e

import (
	"bytes"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/netio"
	"github.com/felixbroker/felix/segment/vfs"
)

// A subscriber that closes and resumes from the offset after the last
// event it handled, again and again while a publisher keeps publishing,
// sees every record exactly once and in order: history joins live
// delivery with no gap and no duplicate.
func TestAResumedSubscriptionIsGaplessUnderConcurrentPublishes(t *testing.T) {
	b := newBroker(t)
	pub, sub := b.dial(t), b.dial(t)
	ctx := testCtx(t)
	s := createStream(t, pub, client.StreamConfig{Shards: 1})
	const total, chunk = 3000, 250
	published := make(chan error, 1)
	go func() {
		for i := range total {
			if _, err := pub.Publish(ctx, s, strconv.AppendInt(nil, int64(i), 10)); err != nil {
				published <- err
				return
			}
		}
		published <- nil
	}()
	next := int64(0)
	opts := client.SubscribeOptions{Start: client.FromEarliest(), Buffer: 4 * chunk}
	for resumes := 0; next < total; resumes++ {
		sb, err := sub.Subscribe(ctx, s, 0, opts)
		if err != nil {
			t.Fatal(err)
		}
		for n := 0; n < chunk && next < total; n++ {
			ev, err := sb.Next(ctx)
			if err != nil {
				t.Fatalf("after %d resumes at offset %d: %v", resumes, next, err)
			}
			if ev.Offset != next || ev.Missed != 0 || string(ev.Value) != strconv.Itoa(int(next)) {
				t.Fatalf("after %d resumes: offset %d (missed %d) value %s, want offset and value %d",
					resumes, ev.Offset, ev.Missed, ev.Value, next)
			}
			next = ev.Offset + 1
		}
		_ = sb.Close()
		opts.Start = client.FromOffset(next)
	}
	if err := <-published; err != nil {
		t.Fatal(err)
	}
}

// slowSubscriberBroker keeps a small outbound budget per connection, so a
// subscriber that stops reading fills its broker-side queue quickly.
func slowSubscriberBroker(t *testing.T) *broker {
	return startBrokerWith(t, vfs.NewMem(), "/data", func(c *netio.Config) { c.OutboundBytesMax = 64 << 10 })
}

// publishKiB publishes n 1 KiB records in batches of 128, each value
// starting with its index, and returns how long it took.
func publishKiB(t *testing.T, c *client.Client, s client.Stream, n int) time.Duration {
	t.Helper()
	ctx := testCtx(t)
	start := time.Now()
	recs := make([]client.Record, 0, 128)
	for i := 0; i < n; {
		recs = recs[:0]
		for ; len(recs) < cap(recs) && i < n; i++ {
			v := make([]byte, 1024)
			copy(v, strconv.Itoa(i))
			recs = append(recs, client.Record{Value: v})
		}
		if _, err := c.PublishBatch(ctx, s, recs); err != nil {
			t.Fatal(err)
		}
	}
	return time.Since(start)
}

// A subscriber that stops reading is dropped, not waited for: every
// publish is acknowledged while it reads nothing (its client buffer fills,
// its connection stops reading, the broker's queue overflows), and its
// subscription ends with subscriber_lagged naming the first record it
// missed, from which a new subscription catches up. The publisher shares
// the subscriber's client, so not even the client makes it wait.
func TestASlowSubscriberIsDroppedWhileThePublisherKeepsItsRate(t *testing.T) {
	b := slowSubscriberBroker(t)
	c := b.dial(t)
	ctx := testCtx(t)
	s := createStream(t, c, client.StreamConfig{Shards: 1})
	const total = 8192
	alone := publishKiB(t, c, s, total) // the rate with no subscriber
	sb, err := c.Subscribe(ctx, s, 0, client.SubscribeOptions{QueueCapacity: 16, Overflow: client.Disconnect, Buffer: 16})
	if err != nil {
		t.Fatal(err)
	}
	withSlow := publishKiB(t, c, s, total) // acknowledged while the subscriber reads nothing
	t.Logf("publishing %d KiB took %v alone and %v beside a subscriber that reads nothing", total, alone, withSlow)
	var next int64 = total
	var end error
	for ev, err := range sb.Events(ctx) {
		if err != nil {
			end = err
			break
		}
		if ev.Offset != next || ev.Missed != 0 {
			t.Fatalf("event at %d (missed %d), want %d: Disconnect delivers a gapless prefix", ev.Offset, ev.Missed, next)
		}
		next++
	}
	var se *client.SubscriptionEndedError
	if !errors.As(end, &se) || !errors.Is(end, client.ErrSubscriberLagged) || se.FirstMissedOffset == nil {
		t.Fatalf("the slow subscription ended with %v, want subscriber_lagged", end)
	}
	if *se.FirstMissedOffset != next || se.ResumeOffset != next || next >= 2*total {
		t.Fatalf("delivered up to %d, first missed %d, resume at %d", next, *se.FirstMissedOffset, se.ResumeOffset)
	}
	catchUp, err := c.Subscribe(ctx, s, 0, client.SubscribeOptions{Start: client.FromOffset(se.ResumeOffset), Buffer: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer catchUp.Close()
	for ; next < 2*total; next++ {
		ev, err := catchUp.Next(ctx)
		if err != nil || ev.Offset != next || !bytes.HasPrefix(ev.Value, []byte(strconv.Itoa(int(next-total)))) {
			t.Fatalf("catching up at %d: offset %d %v", next, ev.Offset, err)
		}
	}
}

// A drop under DropNew is visible as a gap: the events' Missed counts add
// up, with the events delivered, to every offset up to the last one seen.
func TestADropIsVisibleAsAnOffsetGap(t *testing.T) {
	b := slowSubscriberBroker(t)
	pub := b.dial(t)
	ctx := testCtx(t)
	s := createStream(t, pub, client.StreamConfig{Shards: 1})
	sb, err := pub.Subscribe(ctx, s, 0, client.SubscribeOptions{QueueCapacity: 16, Overflow: client.DropNew, Buffer: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	const total = 8192
	publishKiB(t, pub, s, total) // while the subscriber reads nothing
	// Read until a marker published after the drops arrives. A marker
	// published while the broker's queue is still full is dropped too, so
	// publish one after every event read with nothing else queued here.
	var delivered, missed uint64
	for {
		ev, err := sb.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		delivered++
		missed += ev.Missed
		if bytes.Equal(ev.Value, []byte("marker")) {
			if delivered+missed != uint64(ev.Offset)+1 {
				t.Fatalf("%d delivered + %d missed != %d offsets up to the marker", delivered, missed, ev.Offset+1)
			}
			break
		}
		if sb.Stats().Queued == 0 {
			if _, err := pub.Publish(ctx, s, []byte("marker")); err != nil {
				t.Fatal(err)
			}
		}
	}
	if missed == 0 {
		t.Fatal("no record was dropped; the test did not fill the subscriber's queue")
	}
	t.Logf("%d delivered, %d dropped (the server counts %d)", delivered, missed, b.metrics().SubscriberDrops.Load())
}
