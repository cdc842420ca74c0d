package engine

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/felixbroker/felix/engine/shardlog"
)

// gatedReplication serves each replicated shard from its local log, as a
// leader whose generation start has not committed refuses reads of its
// end until the test opens the gate.
type gatedReplication struct{ open atomic.Bool }

func (g *gatedReplication) Replicate(r ReplicaLog) (ReplicatedLog, error) {
	return &gatedLog{Log: r.Log, g: g}, nil
}

type gatedLog struct {
	*shardlog.Log
	g *gatedReplication
}

var errNotStarted = &NotLeaderError{Stream: sid, Shard: 0}

func (l *gatedLog) ReadGate() error {
	if !l.g.open.Load() {
		return errNotStarted
	}
	return nil
}

// A shard whose log is not ready to say its end (a new leader whose
// generation start has not committed) refuses a subscribe, from any
// start, with the log's retryable not-leader error; once it is ready the
// subscription registers at its end.
func TestASubscribeIsRefusedUntilTheShardsEndIsKnown(t *testing.T) {
	g := &gatedReplication{}
	_, sh := replicatedTestShard(t, g)
	for _, opts := range []SubscribeOptions{{Start: StartLatest}, {Start: StartEarliest, UntilEnd: true, End: -1}, {Start: StartOffset}} {
		sub, err := sh.Subscribe(opts)
		var nl *NotLeaderError
		if err == nil || !errors.As(err, &nl) || !errors.Is(err, ErrNotLeader) {
			t.Fatalf("%+v before the end is known: %v, %v; want not_leader", opts, sub, err)
		}
	}
	if err := sh.ReadReady(); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("ReadReady = %v", err)
	}
	g.open.Store(true)
	sub, err := sh.Subscribe(SubscribeOptions{Start: StartLatest, UntilEnd: true, End: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if end, _ := sub.EndOffset(); end != sh.End() || sub.First() != sh.End() || sh.ReadReady() != nil {
		t.Fatalf("registered at %d until %d, the shard's end %d", sub.First(), end, sh.End())
	}
}
