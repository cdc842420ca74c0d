package netio

import (
	"context"
	"testing"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/group"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/netio/wire"
	"github.com/felixbroker/felix/segment/vfs"
)

// startGroupBroker is a server over a durable engine on a memory file
// system, serving consumer groups.
func startGroupBroker(t *testing.T, mutate ...func(*Config)) *testBroker {
	t.Helper()
	e, err := engine.Open(engine.Options{FS: vfs.NewMem(), Dir: "/data", Fsync: shardlog.None()})
	if err != nil {
		t.Fatal(err)
	}
	with := append([]func(*Config){func(cfg *Config) {
		cfg.Groups = group.New(e, group.Options{})
	}}, mutate...)
	return startBrokerOn(t, e, with...)
}

func (b *testBroker) createDurable(name string, shards int) wire.StreamRef {
	b.t.Helper()
	id := engine.StreamID{Tenant: "acme", Namespace: "prod", Name: name}
	if _, err := b.e.CreateStream(id, engine.StreamConfig{Shards: shards, Durable: true}); err != nil {
		b.t.Fatal(err)
	}
	return wireRef(id)
}

// publishValues publishes one record per value to shard 0 and waits for
// the acknowledgement.
func (c *rawClient) publishValues(ref wire.StreamRef, values ...string) {
	c.t.Helper()
	recs := make([]wire.Record, len(values))
	for i, v := range values {
		recs[i] = wire.Record{Value: []byte(v)}
	}
	id := c.id()
	c.send(wire.AppendPublishBatch(nil, id, ref, wire.AckPerBatch, recs))
	ackOf(c.t, c.read())
}

// pollRecords sends GROUP_POLL and reads its GROUP_RECORDS.
func (c *rawClient) pollRecords(m wire.GroupPoll) []wire.GroupRecord {
	c.t.Helper()
	id := c.id()
	c.send(wire.AppendGroupPoll(nil, id, m))
	return recordsOf(c.t, c.read(), id)
}

func recordsOf(t testing.TB, f wire.Frame, requestID uint64) []wire.GroupRecord {
	t.Helper()
	if f.Type != wire.TypeGroupRecords || f.RequestID != requestID {
		t.Fatalf("want GROUP_RECORDS for %d, got %v for %d: %v", requestID, f.Type, f.RequestID, decodeErr(f))
	}
	var r wire.GroupRecords
	if err := r.Decode(f, wire.Limits{}); err != nil {
		t.Fatal(err)
	}
	var out []wire.GroupRecord
	for it := r.Records(); it.Next(); {
		out = append(out, it.Record())
	}
	return out
}

// settle sends an ack, nack or extend and reads GROUP_RESULT.
func (c *rawClient) settle(frame func(id uint64) []byte) (uint32, []uint64) {
	c.t.Helper()
	id := c.id()
	c.send(frame(id))
	f := c.read()
	if f.Type != wire.TypeGroupResult || f.RequestID != id {
		c.t.Fatalf("want GROUP_RESULT for %d, got %v: %v", id, f.Type, decodeErr(f))
	}
	var r wire.GroupResult
	if err := r.Decode(f, wire.Limits{}); err != nil {
		c.t.Fatal(err)
	}
	return r.Applied, r.NotHeld.AppendTo(nil)
}

func TestGroupFramesAreRefusedWithoutGroups(t *testing.T) {
	b := startBroker(t)
	c := b.dial()
	ok := c.hello(wire.FeaturesAll, nil)
	if ok.Features.Has(wire.FeatureConsumerGroups) {
		t.Fatal("a broker without groups offered consumer_groups")
	}
	ref := b.createStream("plain", 1)
	id := c.id()
	c.send(wire.AppendGroupPoll(nil, id, wire.GroupPoll{Group: wire.GroupRef{Stream: ref, Group: []byte("g")}, MaxRecords: 1}))
	c.expectError(wire.CodeFeatureNotNegotiated, id)
}

func TestGroupPollAckAndDescribeOverFrames(t *testing.T) {
	b := startGroupBroker(t)
	c := b.client(wire.FeaturesAll)
	ref := b.createDurable("orders", 1)
	c.publishValues(ref, "a", "b", "c")
	g := wire.GroupRef{Stream: ref, Group: []byte("billing")}
	recs := c.pollRecords(wire.GroupPoll{Group: g, MaxRecords: 10})
	if len(recs) != 3 || string(recs[0].Value) != "a" || recs[2].Offset != 2 || recs[1].DeliveryCount != 1 {
		t.Fatalf("poll: %+v", recs)
	}
	applied, notHeld := c.settle(func(id uint64) []byte { return wire.AppendGroupAck(nil, id, g, []uint64{0, 1, 2}) })
	if applied != 3 || len(notHeld) != 0 {
		t.Fatalf("ack: applied %d, not held %v", applied, notHeld)
	}
	info := decodeControl[wire.GroupInfo](t, c.control(&wire.GroupDescribe{Stream: ref, Group: "billing"}))
	if info.Cursor != 3 || info.InFlight != 0 || info.Lag != 0 || info.EndOffset != 3 || info.Acked != 3 {
		t.Fatalf("describe: %+v", info)
	}
	list := decodeControl[wire.GroupListResult](t, c.control(&wire.GroupList{Stream: ref}))
	if len(list.Groups) != 1 || list.Groups[0] != "billing" {
		t.Fatalf("list: %+v", list)
	}
}

func TestGroupAckOfAnotherConsumersClaimIsNotHeld(t *testing.T) {
	b := startGroupBroker(t)
	c := b.client(wire.FeaturesAll)
	ref := b.createDurable("jobs", 1)
	c.publishValues(ref, "x")
	mine := wire.GroupRef{Stream: ref, Group: []byte("g"), Consumer: []byte("worker-1")}
	theirs := wire.GroupRef{Stream: ref, Group: []byte("g"), Consumer: []byte("worker-2")}
	if recs := c.pollRecords(wire.GroupPoll{Group: mine, MaxRecords: 1}); len(recs) != 1 {
		t.Fatalf("poll: %+v", recs)
	}
	applied, notHeld := c.settle(func(id uint64) []byte { return wire.AppendGroupAck(nil, id, theirs, []uint64{0}) })
	if applied != 0 || len(notHeld) != 1 || notHeld[0] != 0 {
		t.Fatalf("another consumer's ack: applied %d, not held %v", applied, notHeld)
	}
	// The connection without a name is a consumer of its own, too.
	self := wire.GroupRef{Stream: ref, Group: []byte("g")}
	if applied, _ := c.settle(func(id uint64) []byte { return wire.AppendGroupAck(nil, id, self, []uint64{0}) }); applied != 0 {
		t.Fatal("the connection's own consumer acked worker-1's claim")
	}
	if applied, _ := c.settle(func(id uint64) []byte { return wire.AppendGroupAck(nil, id, mine, []uint64{0}) }); applied != 1 {
		t.Fatal("the holder's ack was refused")
	}
}

func TestGroupLongPollIsAnsweredWhenARecordArrives(t *testing.T) {
	b := startGroupBroker(t)
	c := b.client(wire.FeaturesAll)
	pub := b.client(wire.FeaturesAll)
	ref := b.createDurable("wake", 1)
	g := wire.GroupRef{Stream: ref, Group: []byte("g")}
	id := c.id()
	c.send(wire.AppendGroupPoll(nil, id, wire.GroupPoll{Group: g, MaxRecords: 5, WaitMillis: 60_000}))
	// The poll waits off the loop: the same connection still answers.
	if before := c.ping(); len(before) != 0 {
		t.Fatalf("the waiting poll answered early: %v", before[0].Type)
	}
	pub.publishValues(ref, "late")
	recs := recordsOf(t, c.read(), id)
	if len(recs) != 1 || string(recs[0].Value) != "late" {
		t.Fatalf("woken poll: %+v", recs)
	}
}

func TestGroupWaitingPollEndsWithStop(t *testing.T) {
	b := startGroupBroker(t)
	c := b.client(wire.FeaturesAll)
	ref := b.createDurable("stopping", 1)
	id := c.id()
	c.send(wire.AppendGroupPoll(nil, id, wire.GroupPoll{Group: wire.GroupRef{Stream: ref, Group: []byte("g")}, MaxRecords: 5, WaitMillis: 600_000}))
	c.ping()
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		done <- b.s.Stop(ctx)
	}()
	c.expectError(wire.CodeShuttingDown, id)
	if err := <-done; err != nil {
		t.Fatalf("stop: %v", err)
	}
}

func TestGroupRequestsAreCheckedBeforeAnyWork(t *testing.T) {
	b := startGroupBroker(t)
	c := b.client(wire.FeaturesAll)
	ref := b.createDurable("checked", 1)
	mem := b.createStream("memory", 1)
	g := wire.GroupRef{Stream: ref, Group: []byte("g")}
	cases := []struct {
		name  string
		frame func(id uint64) []byte
		code  wire.Code
		field string
	}{
		{"no records asked", func(id uint64) []byte { return wire.AppendGroupPoll(nil, id, wire.GroupPoll{Group: g}) },
			wire.CodeInvalidArgument, "max_records"},
		{"claim too long", func(id uint64) []byte {
			return wire.AppendGroupPoll(nil, id, wire.GroupPoll{Group: g, MaxRecords: 1, ClaimMillis: 13 * 3600 * 1000})
		}, wire.CodeInvalidArgument, "claim_ms"},
		{"bad group name", func(id uint64) []byte {
			return wire.AppendGroupPoll(nil, id, wire.GroupPoll{Group: wire.GroupRef{Stream: ref, Group: []byte("a/b")}, MaxRecords: 1})
		}, wire.CodeInvalidArgument, "group"},
		{"bad consumer name", func(id uint64) []byte {
			return wire.AppendGroupAck(nil, id, wire.GroupRef{Stream: ref, Group: []byte("g"), Consumer: []byte("..")}, []uint64{0})
		}, wire.CodeInvalidArgument, "consumer"},
		{"nack delay too long", func(id uint64) []byte { return wire.AppendGroupNack(nil, id, g, 13*3600*1000, []uint64{0}) },
			wire.CodeInvalidArgument, "delay_ms"},
		{"extend by nothing", func(id uint64) []byte { return wire.AppendGroupExtend(nil, id, g, 0, []uint64{0}) },
			wire.CodeInvalidArgument, "extend_ms"},
		{"offset out of range", func(id uint64) []byte { return wire.AppendGroupAck(nil, id, g, []uint64{1 << 63}) },
			wire.CodeInvalidArgument, "offsets"},
		{"stream kept in memory", func(id uint64) []byte {
			return wire.AppendGroupPoll(nil, id, wire.GroupPoll{Group: wire.GroupRef{Stream: mem, Group: []byte("g")}, MaxRecords: 1})
		}, wire.CodeInvalidArgument, "stream"},
		{"no such group", func(id uint64) []byte { return wire.AppendGroupAck(nil, id, g, []uint64{0}) }, wire.CodeNotFound, ""},
		{"no such shard", func(id uint64) []byte {
			return wire.AppendGroupPoll(nil, id, wire.GroupPoll{Group: wire.GroupRef{Stream: ref, Shard: 3, Group: []byte("g")}, MaxRecords: 1})
		}, wire.CodeInvalidArgument, "shard"},
	}
	for _, tc := range cases {
		id := c.id()
		c.send(tc.frame(id))
		e := c.expectError(tc.code, id)
		if e.Details.Field != tc.field {
			t.Errorf("%s: field %q, want %q (%v)", tc.name, e.Details.Field, tc.field, e)
		}
	}
	c.ping() // the connection goes on
}

func TestGroupDeadLettersAndRedriveOverFrames(t *testing.T) {
	b := startGroupBroker(t, func(cfg *Config) {
		cfg.Groups = group.New(cfg.Engine, group.Options{MaxDeliveries: 1})
	})
	c := b.client(wire.FeaturesAll)
	ref := b.createDurable("dead", 1)
	c.publishValues(ref, "poison", "fine")
	g := wire.GroupRef{Stream: ref, Group: []byte("g")}
	if recs := c.pollRecords(wire.GroupPoll{Group: g, MaxRecords: 2}); len(recs) != 2 {
		t.Fatalf("poll: %+v", recs)
	}
	c.settle(func(id uint64) []byte { return wire.AppendGroupAck(nil, id, g, []uint64{1}) })
	c.settle(func(id uint64) []byte { return wire.AppendGroupNack(nil, id, g, 0, []uint64{0}) })
	dl := decodeControl[wire.GroupDeadLettersResult](t, c.control(&wire.GroupDeadLetters{Stream: ref, Group: "g"}))
	if len(dl.DeadLetters) != 1 || dl.DeadLetters[0].Offset != 0 || dl.DeadLetters[0].DeliveryCount != 1 || dl.More {
		t.Fatalf("dead letters: %+v", dl)
	}
	rr := decodeControl[wire.GroupRedriveResult](t, c.control(&wire.GroupRedrive{Stream: ref, Group: "g", Offsets: []uint64{0, 1}}))
	if rr.Redriven != 1 || len(rr.NotDead) != 1 || rr.NotDead[0] != 1 {
		t.Fatalf("redrive: %+v", rr)
	}
	recs := c.pollRecords(wire.GroupPoll{Group: g, MaxRecords: 2})
	if len(recs) != 1 || recs[0].Offset != 0 || recs[0].DeliveryCount != 1 {
		t.Fatalf("redriven record: %+v", recs)
	}
}
