package e2e

import (
	"context"
	"errors"
	"testing"

	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/engine/group"
)

// doneCtx is a context that ended before the call that takes it.
func doneCtx() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// notSent checks a call refused for its done context: ErrNotSent and the
// context's error, and not ambiguous.
func notSent(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, client.ErrNotSent) || !errors.Is(err, context.Canceled) || client.Ambiguous(err) || client.Retryable(err) {
		t.Fatalf("%s with a done context: %v (ambiguous %v)", what, err, client.Ambiguous(err))
	}
}

// A write whose context is done before its frame is written sends nothing
// and says so: no record, no value, no counter, no stream or cache made
// or dropped, on a live connection.
func TestAWriteWhoseContextIsDoneBeforeItIsSentSendsNothing(t *testing.T) {
	b := startCacheBroker(t, nil)
	c := b.client()
	ctx := testCtx(t)
	s := createStream(t, c, client.StreamConfig{Shards: 1})
	ca := newCache(t, c, "cancel", client.CacheConfig{})
	if _, err := c.Publish(ctx, s, []byte("live")); err != nil { // the connection is up
		t.Fatal(err)
	}
	_, err := c.Publish(doneCtx(), s, []byte("x"))
	notSent(t, "Publish", err)
	_, err = c.PublishBatch(doneCtx(), s, []client.Record{{Value: []byte("x")}})
	notSent(t, "PublishBatch", err)
	_, err = c.PublishAtLeastOnce(doneCtx(), s, []byte("x"))
	notSent(t, "PublishAtLeastOnce", err)
	_, err = c.PublishAsync(doneCtx(), s, []byte("x")).Wait(ctx)
	notSent(t, "PublishAsync", err)
	_, err = c.Producer(s).PublishBatch(doneCtx(), 0, []client.Record{{Value: []byte("x")}})
	notSent(t, "Producer.PublishBatch", err)
	_, err = c.Publish(doneCtx(), s, []byte("x"), client.WithAck(client.AckNone))
	notSent(t, "Publish AckNone", err)
	_, err = ca.Put(doneCtx(), []byte("k"), []byte("v"))
	notSent(t, "Cache.Put", err)
	_, err = ca.Counter("n").Add(doneCtx(), 1)
	notSent(t, "Counter.Add", err)
	_, err = c.CreateStream(doneCtx(), client.Stream{Tenant: "acme", Namespace: "prod", Name: "never"}, client.StreamConfig{})
	notSent(t, "CreateStream", err)
	notSent(t, "DeleteStream", c.DeleteStream(doneCtx(), s))
	notSent(t, "Cache.Drop", ca.Drop(doneCtx()))

	if info, err := c.DescribeStream(ctx, s); err != nil || info.Shards[0].NextOffset != 1 {
		t.Fatalf("after the refused publishes: %+v %v", info, err)
	}
	if it, err := ca.Get(ctx, []byte("k")); err != nil || it.Found {
		t.Fatalf("after the refused put: %+v %v", it, err)
	}
	if v, err := ca.Counter("n").Get(ctx); err != nil || v.Exists {
		t.Fatalf("after the refused add: %+v %v", v, err)
	}
	if _, err := c.DescribeStream(ctx, client.Stream{Tenant: "acme", Namespace: "prod", Name: "never"}); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("a stream created with a done context: %v", err)
	}
}

// The same for a consumer group's acknowledgements.
func TestAGroupAckWhoseContextIsDoneIsNotSent(t *testing.T) {
	f := newGroupFixture(t, group.Options{})
	f.publish(t, 0, 1)
	g := f.c.Group(f.stream, 0, "workers")
	ms, err := g.Poll(testCtx(t), 1, 0)
	if err != nil || len(ms) != 1 {
		t.Fatalf("poll: %v %v", ms, err)
	}
	notSent(t, "Group.Ack", g.Ack(doneCtx(), ms[0].Offset))
	notSent(t, "Group.Nack", g.Nack(doneCtx(), 0, ms[0].Offset))
	info, err := g.Describe(testCtx(t))
	if err != nil || info.Cursor != 0 || info.InFlight != 1 {
		t.Fatalf("after the refused ack and nack: %+v %v", info, err)
	}
}
