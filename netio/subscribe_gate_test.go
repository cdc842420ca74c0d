package netio

import (
	"sync/atomic"
	"testing"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/netio/wire"
	"github.com/felixbroker/felix/segment/vfs"
)

// startedReplication serves each replicated shard from its local log, as
// a leadership that cannot say its end until its generation start
// commits: the test says when it has.
type startedReplication struct{ started atomic.Bool }

func (r *startedReplication) Replicate(rl engine.ReplicaLog) (engine.ReplicatedLog, error) {
	return &startedLog{Log: rl.Log, r: r, id: rl.Stream.ID, shard: rl.Shard}, nil
}

type startedLog struct {
	*shardlog.Log
	r     *startedReplication
	id    engine.StreamID
	shard int
}

func (l *startedLog) ReadGate() error {
	if !l.r.started.Load() {
		return &engine.NotLeaderError{Stream: l.id, Shard: l.shard}
	}
	return nil
}

// At a leader whose generation start has not committed, a SUBSCRIBE is
// answered not_leader naming no leader (a cluster client tries again, as
// while a promotion is under way) and a describe withholds the shard's
// offsets; once the start commits, both are served.
func TestALeaderServesNoSubscribeBeforeItsGenerationStartCommits(t *testing.T) {
	r := &startedReplication{}
	e, err := engine.Open(engine.Options{FS: vfs.NewMem(), Dir: "/data", Fsync: shardlog.OnCommit(), Replication: r})
	if err != nil {
		t.Fatal(err)
	}
	b := startBrokerOn(t, e)
	id := engine.StreamID{Tenant: "acme", Namespace: "prod", Name: "window"}
	if _, err := e.CreateStream(id, engine.StreamConfig{Durable: true, ReplicationFactor: 3}); err != nil {
		t.Fatal(err)
	}
	ref := wire.StreamRef{Tenant: []byte(id.Tenant), Namespace: []byte(id.Namespace), Stream: []byte(id.Name)}
	c := b.client(wire.FeaturesAll)
	for _, m := range []wire.Subscribe{{Stream: ref}, {Stream: ref, Start: wire.Start{From: wire.StartEarliest}, UntilEnd: true}} {
		req := c.id()
		c.send(wire.AppendControl(nil, req, &m))
		if e := c.expectError(wire.CodeNotLeader, req); e.Details.LeaderAddr != "" || !wire.CodeNotLeader.Retryable() {
			t.Fatalf("not_leader names %q; want none, retryable", e.Details.LeaderAddr)
		}
	}
	info := decodeControl[wire.StreamInfo](t, c.control(&wire.StreamDescribe{Stream: ref}))
	if sh := info.Shards[0]; sh.NextOffset != 0 || sh.Bytes != 0 || sh.LeaderAddr == "" {
		t.Fatalf("described before the start commits as %+v; want its leader, no offsets", sh)
	}
	r.started.Store(true)
	s := c.subscribe(wire.Subscribe{Stream: ref, Start: wire.Start{From: wire.StartEarliest}, UntilEnd: true})
	if s.EndOffset == nil {
		t.Fatalf("SUBSCRIBED %+v, want an end", s)
	}
	if f := c.read(); f.Type != wire.TypeSubscriptionAtEnd {
		t.Fatalf("%v, want SUBSCRIPTION_AT_END of the empty shard", f.Type)
	}
}
