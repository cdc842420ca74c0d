package netio

import (
	"context"
	"sync"
	"testing"

	"github.com/panjf2000/gnet/v2"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/group"
	"github.com/felixbroker/felix/engine/producer"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/netio/wire"
	"github.com/felixbroker/felix/segment/vfs"
)

// syncConn is a loopConn whose AsyncWrite may be called from any
// goroutine (the group workers answer with it); the test runs the writes
// on its own goroutine, as the loop would.
type syncConn struct {
	loopConn
	mu     sync.Mutex
	queued []pendingWrite
}

func (f *syncConn) AsyncWrite(b []byte, cb gnet.AsyncCallback) error {
	f.mu.Lock()
	f.queued = append(f.queued, pendingWrite{b, cb})
	f.mu.Unlock()
	return nil
}

func (f *syncConn) runQueued() {
	for {
		f.mu.Lock()
		q := f.queued
		f.queued = nil
		f.mu.Unlock()
		if len(q) == 0 {
			return
		}
		for _, w := range q {
			f.out = append(f.out, w.b...)
			_ = w.cb(nil, nil)
		}
	}
}

// FuzzQueueTraffic is FuzzTraffic for the frames of consumer groups and
// idempotent producers, which are answered from other goroutines: the
// server must never panic, and everything it answers must decode.
func FuzzQueueTraffic(f *testing.F) {
	ref := wireRef(engine.StreamID{Tenant: "acme", Namespace: "prod", Name: "fuzz"})
	g := wire.GroupRef{Stream: ref, Group: []byte("g")}
	named := wire.GroupRef{Stream: ref, Shard: 1, Group: []byte("g"), Consumer: []byte("w")}
	seq := wire.ProducerSeq{ProducerID: 1}
	seeds := [][]byte{
		wire.AppendPublishBatch(nil, 2, ref, wire.AckPerBatch, []wire.Record{{Value: []byte("a")}, {Value: []byte("b")}}),
		wire.AppendGroupPoll(nil, 3, wire.GroupPoll{Group: g, MaxRecords: 10}),
		wire.AppendGroupPoll(nil, 4, wire.GroupPoll{Group: named, MaxRecords: 2, WaitMillis: 100_000, ClaimMillis: 5}),
		wire.AppendGroupAck(nil, 5, g, []uint64{0, 1}),
		wire.AppendGroupNack(nil, 6, named, 10, []uint64{0}),
		wire.AppendGroupExtend(nil, 7, g, 1000, []uint64{1}),
		wire.AppendControl(nil, 8, &wire.GroupDescribe{Stream: ref, Group: "g"}),
		wire.AppendControl(nil, 9, &wire.GroupList{Stream: ref}),
		wire.AppendControl(nil, 10, &wire.GroupDeadLetters{Stream: ref, Group: "g", Limit: 3}),
		wire.AppendControl(nil, 11, &wire.GroupRedrive{Stream: ref, Group: "g", Offsets: []uint64{0}}),
		wire.AppendControl(nil, 12, &wire.ProducerInit{Stream: ref}),
		wire.AppendPublishIdempotent(nil, 13, ref, seq, []wire.Record{{Value: []byte("i")}}),
		wire.AppendPublishJSON(nil, 14, ref, wire.AckPerBatch, &seq, []wire.Record{{Value: []byte("j")}}),
	}
	for _, s := range seeds {
		f.Add(s, len(s)/2)
	}
	f.Fuzz(func(t *testing.T, in []byte, split int) {
		e, err := engine.Open(engine.Options{FS: vfs.NewMem(), Dir: "/data", Fsync: shardlog.None()})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		if _, err := e.CreateStream(idOf(ref), engine.StreamConfig{Shards: 2, Durable: true}); err != nil {
			t.Fatal(err)
		}
		s, err := NewServer(Config{Engine: e, BrokerID: "b1", Groups: group.New(e, group.Options{}),
			Producers: producer.New(e, producer.Options{Epoch: 1 << 32})})
		if err != nil {
			t.Fatal(err)
		}
		fc := &syncConn{loopConn: loopConn{in: wire.AppendHello(nil, 1, wire.Hello{VersionMin: 1, VersionMax: 1, Features: wire.FeaturesAll})}}
		c := newConn(s, fc)
		c.traffic()
		fc.out = fc.out[:0]
		split = min(max(split, 0), len(in))
		for _, part := range [][]byte{in[:split], in[split:]} {
			fc.in = append(fc.in, part...)
			c.traffic()
		}
		c.endGroups(errShuttingDown) // end the polls still waiting
		if err := s.work.wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		fc.runQueued()
		c.closed()
		checkAnswers(t, fc.out, c.refusing)
	})
}
