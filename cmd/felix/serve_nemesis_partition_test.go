//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/felixbroker/felix/client"
)

// partition is one way the partition nemesis cuts the network around the
// shard's leader.
type partition struct {
	name string
	// isolates: the leader is cut off from both followers, so it must
	// acknowledge nothing sent to it while cut, and the others must
	// promote one of themselves.
	isolates bool
	links    func(leader string, followers []string) []link
}

// partitions, in the order the rounds take them (make test's two rounds
// run the first two).
var partitions = []partition{
	{"full", true, func(l string, f []string) []link {
		return []link{{l, f[0]}, {f[0], l}, {l, f[1]}, {f[1], l}}
	}},
	{"one-way out (the leader's packets to its followers dropped)", true, func(l string, f []string) []link {
		return []link{{l, f[0]}, {l, f[1]}}
	}},
	{"one-way in (the followers' packets to the leader dropped)", true, func(l string, f []string) []link {
		return []link{{f[0], l}, {f[1], l}}
	}},
	{"bridge (the leader cut from one follower, the other reaching both)", false, func(l string, f []string) []link {
		return []link{{l, f[0]}, {f[0], l}}
	}},
}

// nemesisPartitionsEnv, set, runs only the partitions whose names begin
// with one of its comma-separated values ("one-way in", "full,bridge"):
// for a run made to study one kind. Unset, every kind in turn.
const nemesisPartitionsEnv = "FELIX_NEMESIS_PARTITIONS"

// partitionsRun are the partitions the rounds take, in turn.
func partitionsRun(t *testing.T) []partition {
	v := os.Getenv(nemesisPartitionsEnv)
	if v == "" {
		return partitions
	}
	var out []partition
	for _, p := range partitions {
		for _, want := range strings.Split(v, ",") {
			if want = strings.TrimSpace(want); want != "" && strings.HasPrefix(p.name, want) {
				out = append(out, p)
				break
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s=%q names no partition (full, one-way out, one-way in, bridge)", nemesisPartitionsEnv, v)
	}
	return out
}

// partitionOf is round's partition among kinds, and the followers in the
// order its links take them: every other round of a kind swaps them (a
// bridge cuts the leader from the one follower, then from the other).
func partitionOf(kinds []partition, round int, leader string, names []string) (partition, []string) {
	followers := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == leader })
	if (round/len(kinds))%2 == 1 {
		slices.Reverse(followers)
	}
	return kinds[round%len(kinds)], followers
}

// A partitioned leader acknowledges nothing the cluster loses: the three
// brokers run in network namespaces of their own (serve_nemesis_netns_test.go)
// and each round cuts the shard's leader off with nftables rules while a
// writer publishes to it: from both followers, one way (its packets to
// them dropped, or theirs to it), or as a bridge (cut from one follower
// only). Cut off from both, the leader must acknowledge no publish sent
// to it during the cut (Quorum: it can reach no follower), and the others
// must promote one of themselves at a new generation, which takes
// publishes. Then the cut heals, the old leader is sent publishes again,
// and every record acknowledged is read back at the leader all three
// name, judged by the history checker.
func TestAPartitionedLeaderAcknowledgesNothingTheClusterLoses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three felix processes in network namespaces and partitions shard leaders: tens of seconds")
	}
	net := inNemesisNetns(t, []string{"a", "b", "c"})
	if net == nil {
		return // it ran in its network namespace
	}
	began, rounds, kinds := time.Now(), nemesisRounds(t), partitionsRun(t)
	ctx, c, s, h, _, _ := startNemesisRunOn(t, net, rounds, "partitioned")
	// A round that fails mid-cut: healed before the brokers are stopped
	// (cleanups run last registered first), so that they stop as usual.
	t.Cleanup(net.healQuietly)
	for round := range rounds {
		leader, gen := c.awaitSettledLeader(ctx, s)
		p, followers := partitionOf(kinds, round, leader, net.names)
		prefix := fmt.Sprintf("round %d", round)
		c.logs.round(c, s, round, fmt.Sprintf("%s around the leader %s (generation %d)", p.name, leader, gen))
		for i := range 20 {
			c.publishUntilAcked(ctx, h, s, leader, fmt.Sprintf("%s before %d", prefix, i))
		}
		toLeader := prefix + " to " + leader
		cl := c.client(leader)
		w := startWriterOf(ctx, h, s, toLeader, writerSpec{to: leader, within: 10 * time.Second, keepOn: true,
			publish: func(ctx context.Context, v []byte) (client.Position, error) { return cl.Publish(ctx, s, v) }})
		awaitAcked(t, ctx, h, toLeader, 5)
		links, cp := p.links(leader, followers), c.controlPlane(leader)
		net.cut(links)
		cut := time.Now() // every packet of the links is dropped from here
		c.logs.event("cut %s (%s); the control plane on %s", linksString(links), p.name, cp)
		serving, servingGen, promoted := leader, gen, time.Duration(0)
		if p.isolates {
			next, nextGen := c.awaitLeader(ctx, s, leader)
			if nextGen <= gen {
				t.Fatalf("round %d (%s): %s leads while %s is cut off at generation %d, not above %d; /cluster: %s",
					round, p.name, next, leader, nextGen, gen, c.shardStatus(s))
			}
			serving, servingGen, promoted = next, nextGen, time.Since(cut)
			c.logs.event("%s named the leader at generation %d, %v after the cut", next, nextGen, promoted.Round(time.Millisecond))
			first := c.publishUntilAcked(ctx, h, s, next, prefix+" during")
			c.logs.event("the first publish to %s acknowledged (%q, sent %v after the cut), %v after the cut",
				next, first.value, first.sent.Sub(cut).Round(time.Millisecond), time.Since(cut).Round(time.Millisecond))
		} else {
			first := c.publishAtLeaderUntilAcked(ctx, h, s, prefix+" during")
			c.logs.event("a publish at the leader acknowledged by %s, %v after the cut", first.to, time.Since(cut).Round(time.Millisecond))
		}
		// Held until the writer to the cut-off leader has been answered
		// about a publish sent during the cut: its first ones may wait
		// out the publish timeout, and the race detector slows them more.
		answered := func() bool { return !p.isolates || sentAndAnswered(h, toLeader, cut) }
		c.holdPartition(ctx, h, s, cut, serving, prefix+" during", answered)
		healed := time.Now() // before the heal: an answer may come at once
		dropped := net.heal()
		c.logs.event("healed, %v after the cut: %d packets dropped", healed.Sub(cut).Round(time.Millisecond), dropped)
		sent := w.end()
		duringCut := fmt.Sprintf("%d of the writer's %d publishes to %s acknowledged", h.acked(toLeader), sent, leader)
		if p.isolates {
			during := minorityAnswers(t, h, toLeader, cut, healed, round, p.name)
			duringCut = fmt.Sprintf("%s promoted at generation %d %v after the cut; the writer's publishes to %s: %d, of which sent during the cut and answered before the heal %d, none acknowledged",
				serving, servingGen, promoted.Round(time.Millisecond), leader, sent, during)
		}
		// Publishes to the old leader once healed: refused, or acknowledged
		// as records the cluster holds.
		var after []string
		for i := range 3 {
			after = append(after, outcome(c.publish(ctx, h, s, leader, fmt.Sprintf("%s to the healed %s %d", prefix, leader, i), 10*time.Second)))
		}
		now, nowGen := c.awaitSettledLeader(ctx, s)
		c.publishUntilAcked(ctx, h, s, now, prefix+" last")
		read, unacked := c.checkShard(ctx, h, s, now)
		t.Logf("round %d: %s: %s (generation %d; the control plane on %s) cut (%s) %v, %d packets dropped; %s; "+
			"sent to %s healed: %s; %s leads at generation %d; %d records read at %s, %d not acknowledged",
			round, p.name, leader, gen, cp, linksString(links), healed.Sub(cut).Round(time.Millisecond), dropped, duringCut,
			leader, strings.Join(after, "; "), now, nowGen, read, now, unacked)
	}
	t.Logf("%d rounds in %v", rounds, time.Since(began).Round(time.Millisecond))
	c.checkReplicas(ctx, h, s)
}

// controlPlane is the broker whose control plane leads, as the broker's
// /cluster names it, or why none is named.
func (c *nemesisCluster) controlPlane(name string) string {
	st, err := c.clusterStatus(name)
	switch {
	case err != nil:
		return fmt.Sprintf("? (%v)", err)
	case st.ControlPlane == nil:
		return "none"
	}
	return st.ControlPlane.Broker
}

// holdPartitionMax bounds how long a cut is held waiting for the writer
// to the cut-off leader to be answered.
const holdPartitionMax = 20 * time.Second

// holdPartition publishes to the broker serving during a cut, paced, until
// the cut has lasted three leases (no lease the old leader held, nor a
// clock reading it took before the cut, is good by then), ten were made
// and done says so, or holdPartitionMax has passed.
func (c *nemesisCluster) holdPartition(ctx context.Context, h *history, s client.Stream, cut time.Time, to, prefix string, done func() bool) {
	c.t.Helper()
	pace := time.NewTicker(20 * time.Millisecond)
	defer pace.Stop()
	for i := 0; (i < 10 || time.Since(cut) < 3*nemesisLease || !done()) && time.Since(cut) < holdPartitionMax; i++ {
		a := c.publish(ctx, h, s, to, fmt.Sprintf("%s %d", prefix, i), 10*time.Second)
		switch {
		case a.err != nil && !client.Retryable(a.err) && !client.Ambiguous(a.err):
			c.t.Fatalf("publish %q to %s, serving during the cut: %v", a.value, to, a.err)
		case a.err != nil: // a lease late on a loaded machine, or a bridge's leader replaced: the checker holds it to its answer
			c.t.Logf("publish %q to %s, serving during the cut, refused: %v", a.value, to, a.err)
		}
		<-pace.C
	}
}

// sentAndAnswered reports whether a publish with the prefix was sent
// after the cut and has been answered.
func sentAndAnswered(h *history, prefix string, cut time.Time) bool {
	for _, a := range h.snapshot() {
		if strings.HasPrefix(a.value, prefix+" ") && a.sent.After(cut) {
			return true
		}
	}
	return false
}

// minorityAnswers fails the test if a publish with the prefix, sent to
// the leader cut off from both followers after the cut and answered
// before the heal, was acknowledged (at Quorum it can have reached no
// follower), or if there was none (the scenario did not happen). It
// returns how many there were.
func minorityAnswers(t *testing.T, h *history, prefix string, cut, healed time.Time, round int, kind string) int {
	t.Helper()
	var during, acked, all []string
	for _, a := range h.snapshot() {
		if !strings.HasPrefix(a.value, prefix+" ") {
			continue
		}
		all = append(all, fmt.Sprintf("%s (sent %v after the cut, answered %v after)", outcome(a),
			a.sent.Sub(cut).Round(time.Millisecond), a.answered.Sub(cut).Round(time.Millisecond)))
		if a.sent.After(cut) && a.answered.Before(healed) {
			during = append(during, outcome(a))
			if a.err == nil {
				acked = append(acked, outcome(a))
			}
		}
	}
	if len(acked) > 0 {
		t.Fatalf("round %d (%s): the leader cut off from both followers acknowledged publishes sent to it during the cut: %s",
			round, kind, strings.Join(acked, "; "))
	}
	if len(during) == 0 {
		t.Fatalf("round %d (%s): no publish to the cut-off leader was sent and answered during the cut (%v long): the scenario did not happen; the writer's: %s",
			round, kind, healed.Sub(cut).Round(time.Millisecond), strings.Join(all, "; "))
	}
	return len(during)
}

// linksString is links as "a>b b>a": each from's packets to to dropped.
func linksString(links []link) string {
	var out []string
	for _, l := range links {
		out = append(out, l.from+">"+l.to)
	}
	return strings.Join(out, " ")
}
