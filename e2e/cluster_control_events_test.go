package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/netio"
	"github.com/felixbroker/felix/segment"
)

// A subscriber of a replicated Quorum stream is told of no missed record
// where none was dropped: the generation start at offset 0 is an offset
// that holds no record, and the broker says so (control_events). A client
// that leaves the bit out is told of it as a gap, as before.
func TestAReplicatedStreamsSubscriberMissesNothingWhereNothingWasDropped(t *testing.T) {
	c := startCluster(t, 3, nil)
	cc := dialCluster(t, addrs(c.brokers...), client.WithRetryPolicy(failoverPolicy))
	s := replicatedStream(t, cc, 1) // 0: the generation start; 1: ready-0
	for i := range 4 {
		if _, err := cc.PublishAtLeastOnce(testCtx(t), s, fmt.Appendf(nil, "v%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	lead := leaderOf(t, c, cc, s, 0)
	bit := readUntilEnd(t, lead.dial(t), s)
	if len(bit) != 5 || bit[0].Offset != 1 {
		t.Fatalf("with control_events: %+v, want offsets 1..5", bit)
	}
	for _, ev := range bit {
		if ev.Missed != 0 {
			t.Fatalf("with control_events: offset %d reported %d missed, none was dropped", ev.Offset, ev.Missed)
		}
	}
	old := readUntilEnd(t, lead.dial(t, client.WithFeatures(client.DefaultFeatures&^client.FeatureControlEvents)), s)
	if len(old) != 5 || old[0].Offset != 1 || old[0].Missed != 1 || old[1].Missed != 0 {
		t.Fatalf("without control_events: %+v, want offsets 1..5, the first after a gap of 1 (today's behaviour)", old)
	}
	sharded, err := cc.SubscribeSharded(testCtx(t), s, client.ShardedOptions{Start: client.FromEarliest(), Until: client.UntilEnd()})
	if err != nil {
		t.Fatal(err)
	}
	defer sharded.Close()
	for n := 0; ; n++ {
		ev, err := sharded.Next(testCtx(t))
		if errors.Is(err, client.ErrEndReached) && n == 5 {
			break
		}
		if err != nil || ev.Missed != 0 {
			t.Fatalf("sharded, event %d: %+v, %v", n, ev, err)
		}
	}
}

// readUntilEnd reads shard 0 of s from the earliest offset to its end.
func readUntilEnd(t *testing.T, cl *client.Client, s client.Stream) []client.Event {
	t.Helper()
	sub, err := cl.Subscribe(testCtx(t), s, 0, client.SubscribeOptions{Start: client.FromEarliest(), Until: client.UntilEnd()})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	var got []client.Event
	for ev, err := range sub.Events(testCtx(t)) {
		if errors.Is(err, client.ErrEndReached) {
			return got
		}
		if err != nil {
			t.Fatalf("after %d events: %v", len(got), err)
		}
		got = append(got, ev)
	}
	return got
}

// A subscriber of a replicated Quorum stream that falls behind under
// DropNew is told exactly the records dropped: every offset up to a marker
// published after the drops is an event delivered, a record counted in
// Missed, or a control record of the log, once.
func TestAReplicatedStreamsSubscriberIsToldExactlyTheRecordsDropped(t *testing.T) {
	c := startCluster(t, 3, func(_ int, nc *netio.Config) { nc.OutboundBytesMax = 64 << 10 })
	cc := dialCluster(t, addrs(c.brokers...), client.WithRetryPolicy(failoverPolicy))
	s := replicatedStream(t, cc, 1)
	lead := leaderOf(t, c, cc, s, 0)
	pub := lead.dial(t)
	ctx := testCtx(t)
	sb, err := lead.dial(t).Subscribe(ctx, s, 0, client.SubscribeOptions{Start: client.FromEarliest(), QueueCapacity: 16,
		Overflow: client.DropNew, Buffer: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	publishKiB(t, pub, s, 4096) // while the subscriber reads nothing
	var delivered, missed uint64
	for {
		ev, err := sb.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		delivered++
		missed += ev.Missed
		if bytes.Equal(ev.Value, []byte("marker")) {
			control := controlRecordsBelow(t, lead, s, ev.Offset)
			if delivered+missed+control != uint64(ev.Offset)+1 {
				t.Fatalf("%d delivered + %d missed + %d control records != the %d offsets up to the marker",
					delivered, missed, control, ev.Offset+1)
			}
			t.Logf("%d delivered, %d dropped, %d control records", delivered, missed, control)
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
}

// controlRecordsBelow counts the control records of shard 0 of s below
// end, in the leader's log.
func controlRecordsBelow(t *testing.T, nd *node, s client.Stream, end int64) uint64 {
	t.Helper()
	st, err := nd.eng.Stream(streamID(s))
	if err != nil {
		t.Fatal(err)
	}
	sh, err := st.Shard(0)
	if err != nil {
		t.Fatal(err)
	}
	var n uint64
	var buf []byte
	for from := sh.Start(); from < end; {
		out, next, err := sh.Read(from, 1<<20, buf[:0])
		if err != nil || next <= from {
			t.Fatalf("reading the leader's log at %d: %v", from, err)
		}
		it := segment.NewIter(out)
		for r, ok := it.Next(); ok; r, ok = it.Next() {
			if r.Offset < end && r.Flags&segment.FlagControl != 0 {
				n++
			}
		}
		buf, from = out, next
	}
	return n
}
