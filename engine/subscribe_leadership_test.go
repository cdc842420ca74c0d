package engine

import (
	"context"
	"errors"
	"testing"
	"time"
)

// endingReplication serves each replicated shard from its local log and
// keeps the LeadershipEnded the engine gave it, which the test calls as
// the replication would when this broker stops leading.
type endingReplication struct {
	ended func(error)
}

func (r *endingReplication) Replicate(rl ReplicaLog) (ReplicatedLog, error) {
	r.ended = rl.LeadershipEnded
	return rl.Log, nil
}

// A replicated shard's subscriptions end, with the replication's
// not_leader, when this broker stops leading it: nothing would reach them
// here any more, and their subscribers must follow the new leader. The
// shard stays open: a subscription made afterwards (the broker leading
// again) is served.
func TestASubscriptionEndsWhenItsBrokerStopsLeadingTheShard(t *testing.T) {
	rep := &endingReplication{}
	_, sh := replicatedTestShard(t, rep)
	sub, err := sh.Subscribe(SubscribeOptions{Start: StartLatest})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if rep.ended == nil {
		t.Fatal("the replication was given no LeadershipEnded")
	}
	deposed := &NotLeaderError{Stream: sid, Shard: 0, Leader: "b:7100"}
	rep.ended(deposed)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = sub.Next(ctx, nil, 1<<20)
	var nl *NotLeaderError
	if !errors.As(err, &nl) || nl.Leader != "b:7100" {
		t.Fatalf("the subscription's Next after its broker stopped leading: %v, want the not_leader naming b:7100", err)
	}
	again, err := sh.Subscribe(SubscribeOptions{Start: StartEarliest})
	if err != nil {
		t.Fatalf("a subscription once the broker leads again: %v", err)
	}
	again.Close()
}
