package e2e

import (
	"errors"
	"testing"

	"github.com/felixbroker/felix/client"
)

// replicatedProducer is a cluster client whose connections can lose one
// idempotent batch's answer (drop), its Producer on a new stream of one
// shard replicated three ways at Quorum, and the shard's leader; the
// producer's first batch ("first", two records) has landed after
// "ready-0", at the offset returned.
func replicatedProducer(t *testing.T) (*testCluster, *client.ClusterClient, *ackDropper, *client.Producer, client.Stream, *node, int64) {
	t.Helper()
	c := startLeasedCluster(t, 3)
	drop := newAckDropper()
	cc := dialCluster(t, addrs(c.brokers...), drop.option(), client.WithRetryPolicy(failoverPolicy), client.WithPingInterval(0))
	s := replicatedStream(t, cc, 1)
	p := cc.Producer(s)
	first, err := p.PublishBatch(testCtx(t), 0, batchOf("first", 2))
	if err != nil {
		t.Fatal(err)
	}
	return c, cc, drop, p, s, leaderOf(t, c, cc, s, 0), first.FirstOffset
}

// shardNext is shard 0's next offset as its leader nd reports it.
func shardNext(t *testing.T, cc *client.ClusterClient, nd *node, s client.Stream) int64 {
	t.Helper()
	b, err := cc.Broker(nd.addr())
	if err != nil {
		t.Fatal(err)
	}
	info, err := b.DescribeStream(testCtx(t), s)
	if err != nil {
		t.Fatal(err)
	}
	return info.Shards[0].NextOffset
}

// On a stream replicated three ways at Quorum, a batch whose answer is
// lost is sent again by the cluster client's Producer to the shard's
// leader, which answers it from memory: it lands once.
func TestAReSentBatchLandsOnceOnAReplicatedStream(t *testing.T) {
	_, cc, drop, p, s, leader, first := replicatedProducer(t)
	watcher := dialCluster(t, []string{leader.addr()})
	drop.armed.Store(true)
	done := make(chan error, 1)
	var ack client.ProducerAck
	go func() {
		var err error
		ack, err = p.PublishBatch(testCtx(t), 0, batchOf("second", 3))
		done <- err
	}()
	<-drop.sent
	readValues(t, watcher, s, 6) // landed; its answer went nowhere
	drop.kill(t)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !ack.Duplicate || ack.FirstOffset != first+2 || ack.Count != 3 || ack.Sequence != 1 {
		t.Fatalf("the re-sent batch: %+v, want the duplicate of batch 1 at %d", ack, first+2)
	}
	if n := shardNext(t, cc, leader, s); n != first+5 {
		t.Fatalf("the leader's next offset is %d, want %d: the re-send landed again", n, first+5)
	}
}

// A batch in flight when its shard's leader stops cannot be matched by
// the promoted replica, which knows no producers: the cluster client's
// Producer reports it as an unknown outcome, it is on the shard at most
// once, and the producer goes on under a new id at the new leader.
func TestABatchInFlightAcrossAFailoverIsAnUnknownOutcome(t *testing.T) {
	c, cc, drop, p, s, old, _ := replicatedProducer(t)
	watcher := dialCluster(t, []string{old.addr()})
	drop.armed.Store(true)
	done := make(chan error, 1)
	go func() {
		_, err := p.PublishBatch(testCtx(t), 0, batchOf("lost", 2))
		done <- err
	}()
	<-drop.sent
	readValues(t, watcher, s, 5)
	old.stop(t)
	err := <-done
	var uo *client.UnknownOutcomeError
	if !errors.As(err, &uo) || !errors.Is(err, client.ErrProducerUnknown) || uo.Sequence != 1 {
		t.Fatalf("a batch in flight across the failover: %v, want an unknown outcome for batch 1 from an unknown producer", err)
	}
	next, err := p.PublishBatch(testCtx(t), 0, batchOf("after", 1))
	if err != nil || next.Sequence != 0 || next.Duplicate {
		t.Fatalf("the batch after the failover: %+v %v", next, err)
	}
	if leaderOf(t, c, cc, s, 0) == old {
		t.Fatalf("%s leads after it stopped", old.id)
	}
	got := readValues(t, cc, s, 6) // ready-0, first-0, first-1, lost-0, lost-1, after-0
	for _, v := range []string{"first-0", "lost-0", "lost-1", "after-0"} {
		if n := count(got, v); n != 1 {
			t.Fatalf("%q is on the shard %d times: %v", v, n, got)
		}
	}
}

func count(vs []string, v string) (n int) {
	for _, x := range vs {
		if x == v {
			n++
		}
	}
	return n
}
