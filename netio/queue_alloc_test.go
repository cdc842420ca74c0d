package netio

import (
	"testing"

	"github.com/panjf2000/gnet/v2"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/group"
	"github.com/felixbroker/felix/engine/producer"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/netio/wire"
	"github.com/felixbroker/felix/segment/vfs"
)

func TestIdempotentPublishAllocatesNothingInSteadyState(t *testing.T) {
	e, err := engine.Open(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	m := producer.New(e, producer.Options{})
	s, err := NewServer(Config{Engine: e, BrokerID: "b1", Producers: m})
	if err != nil {
		t.Fatal(err)
	}
	id := engine.StreamID{Tenant: "acme", Namespace: "prod", Name: "idem"}
	if _, err := e.CreateStream(id, engine.StreamConfig{Shards: 1}); err != nil {
		t.Fatal(err)
	}
	fc := &loopConn{}
	c := newConn(s, fc)
	fc.in = wire.AppendHello(nil, 1, wire.Hello{VersionMin: 1, VersionMax: 1, Features: wire.FeaturesAll})
	c.traffic()
	pid, err := m.Register()
	if err != nil {
		t.Fatal(err)
	}
	seq := wire.ProducerSeq{ProducerID: pid.Producer, Epoch: uint32(pid.Epoch)}
	recs := make([]wire.Record, 16)
	for i := range recs {
		recs[i] = wire.Record{Value: make([]byte, 64)}
	}
	var frame []byte
	send := func() {
		frame = wire.AppendPublishIdempotent(frame[:0], 2, wireRef(id), seq, recs)
		fc.in = frame
		fc.out = fc.out[:0]
		c.traffic()
		if len(fc.out) == 0 || wire.Type(uint16(fc.out[4])|uint16(fc.out[5])<<8) != wire.TypePublishIdempotentAck {
			t.Fatalf("batch %d not acknowledged", seq.Sequence)
		}
	}
	next := func() { send(); seq.Sequence++ }
	resend := func() { seq.Sequence--; send(); seq.Sequence++ }
	for range 100 {
		next()
	}
	if raceEnabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	if a := testing.AllocsPerRun(500, next); a > 0 {
		t.Errorf("%.2f allocations per new batch", a)
	}
	if a := testing.AllocsPerRun(500, resend); a > 0 {
		t.Errorf("%.2f allocations per re-sent batch", a)
	}
}

// chanConn is a loopConn whose AsyncWrite hands the write to the test
// through a channel (the group goroutines answer with it), allocating
// nothing.
type chanConn struct {
	loopConn
	writes chan pendingWrite
}

type pendingWrite struct {
	b  []byte
	cb gnet.AsyncCallback
}

func (f *chanConn) AsyncWrite(b []byte, cb gnet.AsyncCallback) error {
	f.writes <- pendingWrite{b, cb}
	return nil
}

// answer runs traffic for frame and returns the one answer it gets: the
// loop's own write, or the write a goroutine queued.
func (f *chanConn) answer(t testing.TB, c *conn, frame []byte) wire.Frame {
	f.in, f.out = frame, f.out[:0]
	c.traffic()
	if len(f.out) == 0 {
		w := <-f.writes // a missing answer hangs the test until its -timeout
		f.out = append(f.out, w.b...)
		_ = w.cb(nil, nil)
	}
	var r wire.Reader
	ans, _, err := r.Next(f.out)
	if err != nil {
		t.Fatal(err)
	}
	return ans
}

func TestGroupPollAndAckAllocateNothingInSteadyState(t *testing.T) {
	e, err := engine.Open(engine.Options{FS: vfs.NewMem(), Dir: "/data", Fsync: shardlog.None(), SegmentBytes: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	none := shardlog.None()
	s, err := NewServer(Config{Engine: e, BrokerID: "b1", Groups: group.New(e, group.Options{Fsync: &none, LogSegmentBytes: 64 << 20})})
	if err != nil {
		t.Fatal(err)
	}
	id := engine.StreamID{Tenant: "acme", Namespace: "prod", Name: "queue"}
	if _, err := e.CreateStream(id, engine.StreamConfig{Shards: 1, Durable: true}); err != nil {
		t.Fatal(err)
	}
	fc := &chanConn{writes: make(chan pendingWrite, 4)}
	c := newConn(s, fc)
	fc.in = wire.AppendHello(nil, 1, wire.Hello{VersionMin: 1, VersionMax: 1, Features: wire.FeaturesAll})
	c.traffic()
	recs := make([]wire.Record, 1000)
	for i := range recs {
		recs[i] = wire.Record{Value: make([]byte, 100)}
	}
	for i := range 10 {
		if a := fc.answer(t, c, wire.AppendPublishBatch(nil, uint64(10+i), wireRef(id), wire.AckPerBatch, recs)); a.Type != wire.TypePublishAck {
			t.Fatalf("publish answered %v", a.Type)
		}
	}
	g := wire.GroupRef{Stream: wireRef(id), Group: []byte("g"), Consumer: []byte("worker")}
	var pollFrame, ackFrame []byte
	offsets := make([]uint64, 0, 16)
	round := func() {
		pollFrame = wire.AppendGroupPoll(pollFrame[:0], 2, wire.GroupPoll{Group: g, MaxRecords: 16})
		var rs wire.GroupRecords
		if err := rs.Decode(fc.answer(t, c, pollFrame), wire.Limits{}); err != nil || rs.Count != 16 {
			t.Fatalf("poll: %d records, %v", rs.Count, err)
		}
		offsets = offsets[:0]
		for it := rs.Records(); it.Next(); {
			offsets = append(offsets, it.Record().Offset)
		}
		ackFrame = wire.AppendGroupAck(ackFrame[:0], 3, g, offsets)
		if a := fc.answer(t, c, ackFrame); a.Type != wire.TypeGroupResult {
			t.Fatalf("ack answered %v: %v", a.Type, decodeErr(a))
		}
	}
	for range 100 {
		round()
	}
	if raceEnabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	if a := testing.AllocsPerRun(400, round); a > 0 {
		t.Errorf("%.2f allocations per poll and ack", a)
	}
}
