//go:build unix

package main

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/felixbroker/felix/broker"
	"github.com/felixbroker/felix/client"
)

// The nemesis tests: the contract's failover scenarios (issue 14) run
// with real processes. Three `felix serve` processes on --cluster (an
// embedded etcd member each, loopback only) with --shard-lease 1s hold a
// stream of one shard at replication factor 3, consistency Quorum, fsync
// OnCommit; the shard's leader is killed (SIGKILL) or frozen (SIGSTOP)
// with publishes in flight, and every record acknowledged is then read
// back, at its offset, once, at the leader the others promoted.
//
// Each test runs nemesisRoundsDefault rounds (2) on one cluster, each
// round striking the leader of the round before's failover; set
// FELIX_NEMESIS_ROUNDS=N for more (a killed broker is started again on
// its data directory before the next round). Every wait polls the event
// (DescribeStream's leader, an acknowledgement) under a deadline; nothing
// sleeps.
//
// Two more nemeses beside these: partitions made with nftables, each
// broker in a network namespace of its own
// (serve_nemesis_partition_test.go, serve_nemesis_netns_test.go), and a
// rolling restart (serve_nemesis_restart_test.go). The helpers they share
// are in serve_nemesis_helpers_test.go.

const (
	nemesisLease          = time.Second
	nemesisPublishTimeout = 2 * time.Second
)

// nemesisStream is a stream of one shard, replication factor 3, Quorum,
// OnCommit.
func nemesisStream(t *testing.T, ctx context.Context, c *nemesisCluster, name string) client.Stream {
	t.Helper()
	s := client.Stream{Tenant: "t", Namespace: "nemesis", Name: name}
	cfg := client.StreamConfig{Shards: 1, ReplicationFactor: 3, Consistency: client.ConsistencyQuorum,
		Fsync: client.Fsync{Kind: client.FsyncOnCommit}}
	info, err := c.client("a").CreateStream(ctx, s, cfg)
	if err != nil {
		t.Fatalf("create %v (%+v) through a: %v", s, cfg, err)
	}
	if got := info.Config; got.ReplicationFactor != 3 || got.Consistency != client.ConsistencyQuorum || got.Fsync.Kind != client.FsyncOnCommit {
		t.Fatalf("created %v with %+v, asked for %+v", s, got, cfg)
	}
	return s
}

// A leader killed with publishes in flight loses none it acknowledged:
// 50 records published one after the other through the leader, all
// acknowledged, then two writers publishing to it as it is killed with
// SIGKILL; another broker is promoted, takes publishes, and holds every
// record acknowledged (by the dead leader and by itself), at its offset,
// once, in order.
func TestAKilledLeaderProcessLosesNoQuorumAcknowledgedRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three felix processes on embedded etcd members and kills shard leaders: tens of seconds")
	}
	began, rounds := time.Now(), nemesisRounds(t)
	ctx, c, s, h, leader, gen := startNemesisRun(t, rounds, "killed")
	for round := range rounds {
		prefix := fmt.Sprintf("round %d", round)
		c.logs.round(c, s, round, fmt.Sprintf("kill -9 of the leader %s (generation %d)", leader, gen))
		for i := range 50 {
			// Every one acknowledged in the end: a refusal (a lease late on a
			// loaded machine) is tried again, and the checker holds each try.
			c.publishUntilAcked(ctx, h, s, leader, fmt.Sprintf("%s before %d", prefix, i))
		}
		var writers []*writer
		for w := range 2 {
			writers = append(writers, c.startWriter(ctx, h, s, leader, fmt.Sprintf("%s writer %d", prefix, w), 10*time.Second))
		}
		awaitAcked(t, ctx, h, prefix+" writer", 10)
		killed := time.Now()
		c.logs.event("SIGKILL to %s, the leader", leader)
		c.kill(leader)
		c.logs.event("%s is gone", leader)
		inFlight := 0
		for _, w := range writers {
			inFlight += w.end()
		}
		next, nextGen := c.awaitLeader(ctx, s, leader)
		if nextGen <= gen {
			t.Fatalf("round %d: %s leads after %s was killed at generation %d, not above %d: a new leader must lead a new generation; /cluster: %s", round, next, leader, nextGen, gen, c.shardStatus(s))
		}
		promoted := time.Since(killed)
		c.logs.event("%s named the leader at generation %d, %v after the kill", next, nextGen, promoted.Round(time.Millisecond))
		first := c.publishUntilAcked(ctx, h, s, next, prefix+" after")
		served := time.Since(killed)
		c.logs.event("the first publish to %s acknowledged (%q, sent %v after the kill), %v after the kill",
			next, first.value, first.sent.Sub(killed).Round(time.Millisecond), served.Round(time.Millisecond))
		for i := range 20 {
			if a := c.publish(ctx, h, s, next, fmt.Sprintf("%s after %d", prefix, i), 10*time.Second); a.err != nil {
				t.Fatalf("round %d: publish %q to the new leader %s (generation %d), after %q was acknowledged: %v",
					round, a.value, next, nextGen, first.value, a.err)
			}
		}
		read, unacked := c.checkShard(ctx, h, s, next)
		t.Logf("round %d: %s (generation %d) killed with %d writer publishes made; %s named leader at generation %d %v after, "+
			"its first publish acknowledged %v after; %d records read at %s, all acknowledged ones among them, %d not acknowledged",
			round, leader, gen, inFlight, next, nextGen, promoted.Round(time.Millisecond), served.Round(time.Millisecond), read, next, unacked)
		if round+1 < rounds {
			c.restart(leader)
		}
		leader, gen = next, nextGen
	}
	t.Logf("%d rounds in %v", rounds, time.Since(began).Round(time.Millisecond))
	c.checkReplicas(ctx, h, s)
}

// A leader frozen past its lease acknowledges nothing the cluster loses:
// a writer publishes to the leader as it is stopped with SIGSTOP and
// kept stopped until another broker is named leader (well past the 1 s
// lease: the others must notice and promote); the new leader takes
// publishes; then the old one resumes (SIGCONT). The publish in flight to
// it and those sent to it after it resumed are refused, or acknowledged
// only as records the new leader holds (forwarded); every record
// acknowledged before, during and after is read back at the new leader.
func TestAFrozenLeaderProcessAcknowledgesNothingTheClusterLoses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three felix processes on embedded etcd members and freezes shard leaders: tens of seconds")
	}
	began, rounds := time.Now(), nemesisRounds(t)
	ctx, c, s, h, leader, gen := startNemesisRun(t, rounds, "frozen")
	for round := range rounds {
		prefix := fmt.Sprintf("round %d", round)
		for i := range 20 {
			// Every one acknowledged in the end: a refusal (a lease late on a
			// loaded machine) is tried again, and the checker holds each try.
			c.publishUntilAcked(ctx, h, s, leader, fmt.Sprintf("%s before %d", prefix, i))
		}
		// The writer's publishes wait out the freeze: their answer comes
		// after the resume.
		w := c.startWriter(ctx, h, s, leader, prefix+" in flight", 40*time.Second)
		awaitAcked(t, ctx, h, prefix+" in flight", 5)
		frozen := time.Now()
		c.signal(leader, syscall.SIGSTOP)
		next, nextGen := c.awaitLeader(ctx, s, leader)
		if nextGen <= gen {
			t.Fatalf("round %d: %s leads while %s is frozen at generation %d, not above %d: a new leader must lead a new generation; /cluster: %s", round, next, leader, nextGen, gen, c.shardStatus(s))
		}
		promoted := time.Since(frozen)
		c.publishUntilAcked(ctx, h, s, next, prefix+" new leader")
		// The new leader takes publishes while the old one stays frozen
		// for at least three leases: no lease it held, nor any clock
		// reading it took before the freeze, is still good when it
		// resumes.
		pace := time.NewTicker(20 * time.Millisecond)
		for i := 0; i < 10 || time.Since(frozen) < 3*nemesisLease; i++ {
			a := c.publish(ctx, h, s, next, fmt.Sprintf("%s new leader %d", prefix, i), 10*time.Second)
			switch {
			case a.err != nil && !client.Retryable(a.err) && !client.Ambiguous(a.err):
				t.Fatalf("round %d: publish %q to the new leader %s (generation %d): %v", round, a.value, next, nextGen, a.err)
			case a.err != nil: // a lease late on a loaded machine: refused, and the checker holds it to that
				t.Logf("round %d: publish %q to the new leader %s refused: %v", round, a.value, next, a.err)
			}
			<-pace.C
		}
		pace.Stop()
		resumedAt := time.Now() // before the signal: an answer may come at once
		c.signal(leader, syscall.SIGCONT)
		resumed := resumedAt.Sub(frozen)
		sent := w.end() // the publish in flight answered
		// Publishes sent to the old leader once it has resumed.
		var after []string
		for i := range 3 {
			a := c.publish(ctx, h, s, leader, fmt.Sprintf("%s to the resumed %d", prefix, i), 10*time.Second)
			after = append(after, outcome(a))
		}
		var answers, all []string
		across := 0 // the writer's publishes made before the resume, answered after
		for _, a := range h.snapshot() {
			if !strings.HasPrefix(a.value, prefix+" in flight") {
				continue
			}
			all = append(all, fmt.Sprintf("%s (sent %v before the freeze, answered %v after the resume)",
				outcome(a), frozen.Sub(a.sent).Round(time.Millisecond), a.answered.Sub(resumedAt).Round(time.Millisecond)))
			if a.sent.Before(resumedAt) && a.answered.After(resumedAt) {
				across++
			}
			if a.err != nil {
				answers = append(answers, outcome(a))
			}
		}
		if across == 0 {
			t.Fatalf("round %d: no publish to %s was in flight across its freeze (the writer made %d): the scenario did not happen; the writer's publishes: %s", round, leader, sent, strings.Join(all, "; "))
		}
		// One more at the new leader: the last offset read covers all the
		// above.
		c.publishUntilAcked(ctx, h, s, next, prefix+" last")
		read, unacked := c.checkShard(ctx, h, s, next)
		t.Logf("round %d: %s (generation %d) frozen %v, %d writer publishes made (the refused: %s); %s named leader at generation %d %v after the freeze; "+
			"sent to %s resumed: %s; %d records read at %s, all acknowledged ones among them, %d not acknowledged",
			round, leader, gen, resumed.Round(time.Millisecond), sent, strings.Join(answers, "; "), next, nextGen,
			promoted.Round(time.Millisecond), leader, strings.Join(after, "; "), read, next, unacked)
		leader, gen = next, nextGen
	}
	t.Logf("%d rounds in %v", rounds, time.Since(began).Round(time.Millisecond))
	c.checkReplicas(ctx, h, s)
}

// outcome is an attempt's answer, in a word or its error.
func outcome(a attempt) string {
	if a.err == nil {
		return fmt.Sprintf("%q acknowledged at %d", a.value, a.pos.Offset)
	}
	return fmt.Sprintf("%q refused: %v", a.value, a.err)
}

// --shard-lease and --publish-timeout reach the ClusterConfig, 0 is the
// broker's default, and a negative or unparsable one is refused naming
// its flag.
func TestTheNemesisTimingFlagsAreChecked(t *testing.T) {
	cc := clusterConfig(configOf(t, map[string]string{"shard-lease": "1s", "publish-timeout": "2500ms"}))
	if cc.ShardLease != time.Second || cc.PublishTimeout != 2500*time.Millisecond {
		t.Fatalf("--shard-lease 1s --publish-timeout 2500ms: ShardLease %v, PublishTimeout %v", cc.ShardLease, cc.PublishTimeout)
	}
	if cc := clusterConfig(configOf(t, map[string]string{"shard-lease": "0", "publish-timeout": "0s"})); cc.ShardLease != 0 || cc.PublishTimeout != 0 {
		t.Fatalf("0: ShardLease %v, PublishTimeout %v, want 0 (the broker's defaults, %v and %v)",
			cc.ShardLease, cc.PublishTimeout, broker.ShardLeaseDefault, broker.PublishTimeoutDefault)
	}
	for _, c := range []struct{ key, value, want string }{
		{"shard-lease", "-1s", "--shard-lease: -1s is negative"},
		{"publish-timeout", "-5ms", "--publish-timeout: -5ms is negative"},
		{"shard-lease", "soon", "--shard-lease"},
		{"publish-timeout", "5", "--publish-timeout"},
	} {
		st := serveSettings()
		if err := st.resolve("", noEnv, map[string]string{c.key: c.value}); err != nil {
			t.Fatal(err)
		}
		_, err := parseServeConfig(st)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("--%s %s: %v, want one line saying %q", c.key, c.value, err, c.want)
		}
	}
}

// startNemesisRun starts three processes on loopback, creates the run's
// stream and waits until its leader serves (its generation's start
// record committed): the context bounds the whole run.
func startNemesisRun(t *testing.T, rounds int, name string) (context.Context, *nemesisCluster, client.Stream, *history, string, uint64) {
	return startNemesisRunOn(t, loopbackHosts{}, rounds, name)
}

// startNemesisRunOn is startNemesisRun with the processes where hosts
// says.
func startNemesisRunOn(t *testing.T, hosts nemesisHosts, rounds int, name string) (context.Context, *nemesisCluster, client.Stream, *history, string, uint64) {
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(30+30*rounds)*time.Second)
	t.Cleanup(cancel)
	c := startNemesisClusterOn(t, hosts, nemesisLease, nemesisPublishTimeout)
	t.Logf("three processes ready %v after the start", time.Since(began).Round(time.Millisecond))
	s := nemesisStream(t, ctx, c, name)
	h := newHistory()
	c.load = c.startCacheLoad(ctx, h, name)
	leader, gen := c.awaitLeader(ctx, s, "")
	c.publishUntilAcked(ctx, h, s, leader, "first")
	return ctx, c, s, h, leader, gen
}
