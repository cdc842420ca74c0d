package e2e

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/group"
)

// patientRetries outlast a broker restart: a re-send waits for the broker
// to listen again.
var patientRetries = client.WithRetryPolicy(client.RetryPolicy{Attempts: 200, InitialBackoff: 5 * time.Millisecond, MaxBackoff: 50 * time.Millisecond})

func batchOf(prefix string, n int) []client.Record {
	recs := make([]client.Record, n)
	for i := range recs {
		recs[i] = client.Record{Value: fmt.Appendf(nil, "%s-%d", prefix, i)}
	}
	return recs
}

// waitRecords reads the shard from its start and waits until n records
// are there; it fails if more are.
func waitRecords(t *testing.T, c *client.Client, s client.Stream, n int) {
	t.Helper()
	ctx := testCtx(t)
	sub, err := c.Subscribe(ctx, s, 0, client.SubscribeOptions{Start: client.FromEarliest()})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	for range n {
		if _, err := sub.Next(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// shardEnd is the next offset of shard 0, as the broker reports it.
func shardEnd(t *testing.T, c *client.Client, s client.Stream) int64 {
	t.Helper()
	info, err := c.DescribeStream(testCtx(t), s)
	if err != nil {
		t.Fatal(err)
	}
	return info.Shards[0].NextOffset
}

// A batch whose acknowledgement is lost is sent again by the Producer and
// lands once: the broker answers the re-send from memory.
func TestAReSentBatchLandsOnceOverTheWire(t *testing.T) {
	b := startQueueBroker(t, engine.Options{}, group.Options{})
	drop := newAckDropper()
	c := b.dial(t, drop.option(), patientRetries)
	watcher := b.dial(t)
	s := createStream(t, c, client.StreamConfig{Shards: 1})
	p := c.Producer(s)
	if _, err := p.PublishBatch(testCtx(t), 0, batchOf("first", 2)); err != nil {
		t.Fatal(err)
	}
	drop.armed.Store(true)
	done := make(chan error, 1)
	var ack client.ProducerAck
	go func() {
		var err error
		ack, err = p.PublishBatch(testCtx(t), 0, batchOf("second", 3))
		done <- err
	}()
	<-drop.sent
	waitRecords(t, watcher, s, 5) // the batch landed; its answer went nowhere
	drop.kill(t)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !ack.Duplicate || ack.FirstOffset != 2 || ack.Count != 3 || ack.Sequence != 1 {
		t.Fatalf("the re-sent batch: %+v", ack)
	}
	if end := shardEnd(t, watcher, s); end != 5 {
		t.Fatalf("the shard holds %d records, want 5: the re-send landed again", end)
	}
	next, err := p.PublishBatch(testCtx(t), 0, batchOf("third", 1))
	if err != nil || next.Duplicate || next.FirstOffset != 5 || next.Sequence != 2 {
		t.Fatalf("the batch after: %+v, %v", next, err)
	}
}

// A batch in flight across a broker restart cannot be matched by the new
// incarnation, which knows no producers: it is reported as an unknown
// outcome, neither landed twice nor dropped silently, and the producer
// goes on under a new id.
func TestABatchInFlightAcrossARestartIsAnUnknownOutcome(t *testing.T) {
	b := startQueueBroker(t, engine.Options{}, group.Options{})
	drop := newAckDropper()
	c := b.dial(t, drop.option(), patientRetries)
	watcher := b.dial(t)
	s := createStream(t, c, client.StreamConfig{Shards: 1})
	p := c.Producer(s)
	first, err := p.PublishBatch(testCtx(t), 0, batchOf("first", 1))
	if err != nil {
		t.Fatal(err)
	}
	drop.armed.Store(true)
	done := make(chan error, 1)
	go func() {
		_, err := p.PublishBatch(testCtx(t), 0, batchOf("lost", 2))
		done <- err
	}()
	<-drop.sent
	waitRecords(t, watcher, s, 3)
	b.restart()
	err = <-done
	var uo *client.UnknownOutcomeError
	if !errors.As(err, &uo) || !errors.Is(err, client.ErrUnknownOutcome) || !errors.Is(err, client.ErrProducerUnknown) || uo.Sequence != 1 {
		t.Fatalf("want an unknown outcome for batch 1 from an unknown producer, got %v", err)
	}
	if !client.Ambiguous(err) || errors.Is(err, client.ErrNotSent) {
		t.Fatalf("%v: Ambiguous %v, not sent %v; want it ambiguous: the batch may have been applied", err, client.Ambiguous(err), errors.Is(err, client.ErrNotSent))
	}
	watcher = b.dial(t)
	if end := shardEnd(t, watcher, s); end != 3 {
		t.Fatalf("the shard holds %d records, want 3", end)
	}
	next, err := p.PublishBatch(testCtx(t), 0, batchOf("after", 1))
	if err != nil || next.FirstOffset != 3 || next.Sequence != 0 || next.ProducerID == 0 || next.Duplicate {
		t.Fatalf("the batch after the restart: %+v, %v (the first was %+v)", next, err, first)
	}
}

// A batch refused before it could land (a key that chooses another shard)
// is an ordinary refusal, not an unknown outcome, and takes no sequence.
func TestAProducerRefusalIsNotAnUnknownOutcome(t *testing.T) {
	b := startQueueBroker(t, engine.Options{}, group.Options{})
	c := b.dial(t)
	s := createStream(t, c, client.StreamConfig{Shards: 2})
	p := c.Producer(s)
	_, err := p.PublishBatch(testCtx(t), 1, batchOf("unkeyed", 1))
	if !errors.Is(err, client.ErrInvalidArgument) || errors.Is(err, client.ErrUnknownOutcome) {
		t.Fatalf("an unkeyed batch to shard 1: %v", err)
	}
	key := []byte("k")
	for client.ShardFor(key, 2) != 1 {
		key = append(key, 'k')
	}
	ack, err := p.PublishBatch(testCtx(t), 1, []client.Record{{Key: key, Value: []byte("v")}})
	if err != nil || ack.Sequence != 0 || ack.Shard != 1 {
		t.Fatalf("a keyed batch to its shard: %+v, %v", ack, err)
	}
}
