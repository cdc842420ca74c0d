package netio

import (
	"fmt"
	"net"
	"testing"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/netio/wire"
)

// subscribe sends SUBSCRIBE and returns SUBSCRIBED.
func (c *rawClient) subscribe(m wire.Subscribe) *wire.Subscribed {
	c.t.Helper()
	return decodeControl[wire.Subscribed](c.t, c.control(&m))
}

// publishN publishes n one-KiB-ish records in batches over a connection of
// its own, waiting for every ack; for goroutines, so it returns errors.
func publishN(addr string, ref wire.StreamRef, first, n, batch int) error {
	nc, err := net.DialTimeout("tcp", addr, waitLimit)
	if err != nil {
		return err
	}
	defer nc.Close()
	c := &rawClient{t: nil, nc: nc}
	if _, err := nc.Write(wire.AppendHello(nil, 1, wire.Hello{VersionMin: 1, VersionMax: 1, Features: wire.FeaturesAll})); err != nil {
		return err
	}
	if f, err := c.tryRead(); err != nil || f.Type != wire.TypeHelloOK {
		return fmt.Errorf("hello: %v %v", f.Type, err)
	}
	var frames []byte
	sent := 0
	for i := first; i < first+n; i += batch {
		recs := make([]wire.Record, 0, batch)
		for j := i; j < min(i+batch, first+n); j++ {
			recs = append(recs, wire.Record{Value: value(j)})
		}
		frames = wire.AppendPublishBatch(frames, uint64(i+1), ref, wire.AckPerBatch, recs)
		sent++
	}
	if _, err := nc.Write(frames); err != nil {
		return err
	}
	for range sent {
		f, err := c.tryRead()
		if err != nil {
			return err
		}
		if f.Type != wire.TypePublishAck {
			return fmt.Errorf("publish answered %v: %v", f.Type, decodeErr(f))
		}
	}
	return nil
}

func TestASubscriptionJoinsHistoryAndLiveWithNoGapUnderConcurrentPublishes(t *testing.T) {
	b := startBroker(t)
	ref := b.createStream("joined", 1)
	addr := b.s.Addr().String()
	if err := publishN(addr, ref, 0, 500, 25); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	sub := b.client(wire.FeaturesAll)
	go func() { done <- publishN(addr, ref, 500, 1500, 10) }()
	s := sub.subscribe(wire.Subscribe{Stream: ref, Start: wire.Start{From: wire.StartEarliest}})
	if s.FirstOffset != 0 || s.SubscriptionID == 0 {
		t.Fatalf("subscribed %+v", s)
	}
	evs := sub.events(2000)
	for i, ev := range evs {
		if ev.Offset != uint64(i) || string(ev.Value) != string(value(i)) {
			t.Fatalf("event %d has offset %d value %q", i, ev.Offset, ev.Value)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestAnUnsubscribeIsAnsweredAfterTheSubscriptionsLastEvent(t *testing.T) {
	b := startBroker(t)
	ref := b.createStream("unsub", 1)
	c := b.client(wire.FeaturesAll)
	s := c.subscribe(wire.Subscribe{Stream: ref, Start: wire.Start{From: wire.StartLatest}})
	if err := publishN(b.s.Addr().String(), ref, 0, 300, 30); err != nil {
		t.Fatal(err)
	}
	c.send(wire.AppendControl(nil, 77, &wire.Unsubscribe{SubscriptionID: s.SubscriptionID}))
	var evs []wire.Event
	for {
		f := c.read()
		if f.Type == wire.TypeOK {
			if f.RequestID != 77 {
				t.Fatalf("OK for %d", f.RequestID)
			}
			break
		}
		evs = appendBatch(t, evs, f)
	}
	if len(evs) > 300 {
		t.Fatalf("%d events", len(evs))
	}
	if extra := c.ping(); len(extra) != 0 {
		t.Fatalf("%v after the OK", extra[0].Type)
	}
	c.send(wire.AppendControl(nil, 78, &wire.Unsubscribe{SubscriptionID: s.SubscriptionID}))
	c.expectError(wire.CodeNotFound, 78)
}

// slowSubscriber sets a broker up whose sockets fill fast, with a
// subscriber that reads nothing after SUBSCRIBED.
func slowSubscriber(t *testing.T, overflow wire.Overflow) (*testBroker, wire.StreamRef, *rawClient, *deliverer) {
	b := startBroker(t, func(c *Config) {
		c.OutboundBytesMax = 64 << 10
		c.sendBufferBytes = 8 << 10
	})
	ref := b.createStream("slow", 1)
	nc, err := net.DialTimeout("tcp", b.s.Addr().String(), waitLimit)
	if err != nil {
		t.Fatal(err)
	}
	nc.(*net.TCPConn).SetReadBuffer(4 << 10)
	t.Cleanup(func() { nc.Close() })
	c := &rawClient{t: t, nc: nc}
	c.hello(wire.FeaturesAll, nil)
	s := c.subscribe(wire.Subscribe{Stream: ref, Start: wire.Start{From: wire.StartLatest}, QueueCapacity: 64, Overflow: overflow})
	var d *deliverer
	for _, conn := range b.s.connections() {
		conn.subMu.Lock()
		if x, ok := conn.subs[s.SubscriptionID]; ok && conn.remote == nc.LocalAddr().String() {
			d = x
		}
		conn.subMu.Unlock()
	}
	if d == nil {
		t.Fatal("the subscription's deliverer is not registered")
	}
	return b, ref, c, d
}

func TestASlowSubscriberIsDroppedFromWhileThePublisherGoesOnAndTheDropIsAGap(t *testing.T) {
	b, ref, sub, d := slowSubscriber(t, wire.OverflowDropNew)
	const n = 4000
	big := make([]byte, 1024)
	pub := b.client(wire.FeaturesAll)
	var frames []byte
	for i := 0; i < n; i += 50 {
		recs := make([]wire.Record, 50)
		for j := range recs {
			recs[j] = wire.Record{Value: append(value(i+j), big...)}
		}
		frames = wire.AppendPublishBatch(frames, uint64(i+1), ref, wire.AckPerBatch, recs)
	}
	pub.send(frames)
	for range n / 50 {
		ackOf(t, pub.read()) // every publish answered while the subscriber reads nothing
	}
	stats := d.sub.Stats()
	if stats.Dropped == 0 {
		t.Fatalf("nothing dropped: %+v", stats)
	}
	budget := int64(b.s.cfg.OutboundBytesMax)
	if peak := d.c.out.peak.Load(); peak > budget+8<<10 {
		t.Fatalf("the slow connection held %d bytes for its socket, budget %d", peak, budget)
	}

	// The subscriber reads again: what it gets has a gap where the drops
	// were. Nothing is published any more, so the drops are final.
	dropped := d.sub.Stats().Dropped
	evs := sub.events(int(n - dropped))
	// A record published now, with the queue drained, is delivered: the
	// drops before it show as a gap even when they were all at the end.
	pub.send(wire.AppendPublish(nil, 99999, ref, wire.AckPerBatch, wire.Record{Value: []byte("after")}))
	ackOf(t, pub.read())
	evs = append(evs, sub.events(1)...)
	if evs[len(evs)-1].Offset != n {
		t.Fatalf("the record after the drops came at offset %d", evs[len(evs)-1].Offset)
	}
	gaps := 0
	for i := 1; i < len(evs); i++ {
		if evs[i].Offset <= evs[i-1].Offset {
			t.Fatalf("offsets go back: %d after %d", evs[i].Offset, evs[i-1].Offset)
		}
		if evs[i].Offset != evs[i-1].Offset+1 {
			gaps++
		}
	}
	if gaps == 0 || evs[0].Offset != 0 {
		t.Fatalf("%d events from %d, %d gaps, %d dropped of %d", len(evs), evs[0].Offset, gaps, dropped, n)
	}
	if extra := sub.ping(); len(extra) != 0 {
		t.Fatalf("%d frames more than the drops allow", len(extra))
	}
	waitUntil(t, "the drops to be counted", func() bool { return b.s.Metrics().SubscriberDrops.Load() == dropped })
}

func TestDisconnectOverflowEndsTheSubscriptionNamingTheFirstMissedOffset(t *testing.T) {
	b, ref, sub, _ := slowSubscriber(t, wire.OverflowDisconnect)
	big := make([]byte, 1024)
	if err := publishBig(b, ref, 4000, big); err != nil {
		t.Fatal(err)
	}
	var evs []wire.Event
	for {
		f := sub.read()
		if f.Type == wire.TypeSubscriptionEnded {
			m := decodeControl[wire.SubscriptionEnded](t, f)
			if m.Code != wire.CodeSubscriberLagged || m.FirstMissedOffset == nil {
				t.Fatalf("ended %+v", m)
			}
			if want := uint64(len(evs)); *m.FirstMissedOffset != want {
				t.Fatalf("first missed %d after %d events", *m.FirstMissedOffset, want)
			}
			break
		}
		evs = appendBatch(t, evs, f)
	}
	for i, ev := range evs {
		if ev.Offset != uint64(i) {
			t.Fatalf("event %d at offset %d", i, ev.Offset)
		}
	}
}

func publishBig(b *testBroker, ref wire.StreamRef, n int, big []byte) error {
	st, err := b.e.Stream(idOf(ref))
	if err != nil {
		return err
	}
	for i := range n {
		if err := st.Publish([]engine.Record{{Value: append(value(i), big...)}}, nil); err != nil {
			return err
		}
	}
	return nil
}

func TestDeletingAStreamEndsItsSubscriptionsWithNotFound(t *testing.T) {
	b := startBroker(t)
	ref := b.createStream("doomed", 2)
	c := b.client(wire.FeaturesAll)
	s := c.subscribe(wire.Subscribe{Stream: ref, Shard: 1, Start: wire.Start{From: wire.StartLatest}})
	if err := b.e.DeleteStream(idOf(ref)); err != nil {
		t.Fatal(err)
	}
	m := decodeControl[wire.SubscriptionEnded](t, c.read())
	if m.SubscriptionID != s.SubscriptionID || m.Code != wire.CodeNotFound {
		t.Fatalf("ended %+v", m)
	}
	waitUntil(t, "the subscription to be released", func() bool { return b.s.Metrics().SubscriptionsActive.Load() == 0 })
}

func TestSubscribeRefusalsCarryTheirCodes(t *testing.T) {
	e, err := engine.Open(engine.Options{MemoryShardBytes: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	b := startBrokerOn(t, e, func(c *Config) { c.Owner = ledElsewhere{shard: 1, leader: "10.0.0.2:7117"} })
	ref := b.createStream("refusals", 2)
	if err := publishBig(b, ref, 1000, make([]byte, 1024)); err != nil {
		t.Fatal(err)
	}
	sh, _ := mustStream(t, b, ref).Shard(0)
	c := b.client(wire.FeaturesAll)
	cases := []struct {
		m       wire.Subscribe
		code    wire.Code
		details func(wire.Details) bool
	}{
		{wire.Subscribe{Stream: ref, Shard: 1}, wire.CodeNotLeader,
			func(d wire.Details) bool { return d.LeaderAddr == "10.0.0.2:7117" && d.Shard != nil && *d.Shard == 1 }},
		{wire.Subscribe{Stream: ref, Shard: 9}, wire.CodeInvalidArgument,
			func(d wire.Details) bool { return d.Field == "shard" }},
		{wire.Subscribe{Stream: ref, Start: wire.Start{From: wire.StartOffset, Offset: 5000}}, wire.CodeOffsetPastTail,
			func(d wire.Details) bool { return d.Offset != nil && *d.Offset == 1000 }},
		{wire.Subscribe{Stream: ref, Start: wire.Start{From: wire.StartOffset, Offset: 0}}, wire.CodeOffsetBelowRetention,
			func(d wire.Details) bool { return d.Offset != nil && *d.Offset == uint64(sh.Start()) }},
		{wire.Subscribe{Stream: wire.StreamRef{Tenant: []byte("acme"), Namespace: []byte("prod"), Stream: []byte("none")}}, wire.CodeNotFound,
			func(wire.Details) bool { return true }},
		{wire.Subscribe{Stream: wire.StreamRef{Tenant: []byte("acme"), Namespace: []byte("prod"), Stream: []byte("bad/name")}}, wire.CodeInvalidArgument,
			func(d wire.Details) bool { return d.Field == "stream" }},
	}
	for _, tc := range cases {
		e := decodeErr(c.control(&tc.m))
		if e == nil || e.Code != tc.code || !tc.details(e.Details) {
			t.Errorf("%+v: %v", tc.m, e)
		}
	}
	if sh.Start() == 0 {
		t.Fatal("retention removed nothing; the below-retention case proves nothing")
	}
}

// ledElsewhere says another broker leads one shard.
type ledElsewhere struct {
	shard  int
	leader string
}

func (l ledElsewhere) Leader(_ engine.StreamID, shard int) (bool, string) {
	if shard == l.shard {
		return false, l.leader
	}
	return true, ""
}

func TestAConnectionClosedUnderASubscriptionReleasesIt(t *testing.T) {
	b := startBroker(t)
	ref := b.createStream("gone", 1)
	c := b.client(wire.FeaturesAll)
	c.subscribe(wire.Subscribe{Stream: ref, Start: wire.Start{From: wire.StartLatest}})
	c.nc.Close()
	waitUntil(t, "the subscription to be released", func() bool { return b.s.Metrics().SubscriptionsActive.Load() == 0 })
	st := mustStream(t, b, ref)
	if err := st.Publish([]engine.Record{{Value: []byte("after")}}, nil); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the deliverer to exit", func() bool { return b.s.work.n.Load() == 0 })
}
