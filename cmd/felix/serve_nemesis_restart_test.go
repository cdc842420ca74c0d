//go:build unix

package main

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/felixbroker/felix/client"
)

// A rolling restart loses no acknowledged record: each round stops one
// broker as an operator does (SIGTERM, and it must exit 0 within 20 s),
// starts it again on its data directory and addresses, waits until the
// three name one leader and the cluster has acknowledged ten more
// publishes, then reads the shard back for the history checker; two
// writers publish all the while through the cluster client
// (client.DialCluster, which follows the leader), each publish within
// 5 s, going on after a refusal. The brokers are taken in turn, the
// first round's the leader (a, b, c, a, ... from it): make test's two
// rounds restart the leader and then the next broker.
func TestARollingRestartOfTheBrokerProcessesLosesNoAcknowledgedRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three felix processes on embedded etcd members and restarts each in turn: tens of seconds")
	}
	began, rounds := time.Now(), nemesisRounds(t)
	ctx, c, s, h, first, _ := startNemesisRun(t, rounds, "rolling")
	cc := c.clusterClient(ctx)
	names := []string{"a", "b", "c"}
	from := slices.Index(names, first)
	for round := range rounds {
		target := names[(from+round)%len(names)]
		leader, gen := c.awaitSettledLeader(ctx, s)
		prefix := fmt.Sprintf("round %d writer", round)
		var writers []*writer
		for w := range 2 {
			writers = append(writers, startWriterOf(ctx, h, s, fmt.Sprintf("%s %d", prefix, w), writerSpec{to: "cluster", within: 5 * time.Second, keepOn: true,
				publish: func(ctx context.Context, v []byte) (client.Position, error) { return cc.Publish(ctx, s, v) }}))
		}
		awaitAcked(t, ctx, h, prefix, 10)
		exited := c.stop(target)
		stopped := time.Now()
		c.restart(target)
		ready := time.Since(stopped)
		now, nowGen := c.awaitSettledLeader(ctx, s)
		awaitAcked(t, ctx, h, prefix, h.acked(prefix)+10)
		served := time.Since(stopped)
		made := 0
		for _, w := range writers {
			made += w.end()
		}
		c.publishUntilAcked(ctx, h, s, now, fmt.Sprintf("round %d last", round))
		read, unacked := c.checkShard(ctx, h, s, now)
		t.Logf("round %d: %s stopped (SIGTERM, exit 0 %v after; %s led at generation %d), ready again %v after the exit; "+
			"%s leads at generation %d, ten more publishes acknowledged %v after the exit; the writers made %d publishes, %d acknowledged; "+
			"%d records read at %s, %d not acknowledged",
			round, target, exited.Round(time.Millisecond), leader, gen, ready.Round(time.Millisecond), now, nowGen,
			served.Round(time.Millisecond), made, h.acked(prefix), read, now, unacked)
	}
	t.Logf("%d rounds in %v", rounds, time.Since(began).Round(time.Millisecond))
	c.checkReplicas(ctx, h, s)
}

// clusterClient is a cluster client of the three brokers, closed when
// the test ends.
func (c *nemesisCluster) clusterClient(ctx context.Context) *client.ClusterClient {
	c.t.Helper()
	var seeds []string
	for _, n := range []string{"a", "b", "c"} {
		seeds = append(seeds, c.proc(n).addr)
	}
	cc, err := client.DialCluster(ctx, seeds)
	if err != nil {
		c.t.Fatalf("dial the cluster %v: %v", seeds, err)
	}
	c.t.Cleanup(func() { cc.Close() })
	return cc
}
