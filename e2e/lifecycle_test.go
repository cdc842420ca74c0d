package e2e

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/felixbroker/felix/client"
)

// The end of a subscription reaches the client as a typed error: the
// stream's deletion as not_found, the broker's shutdown as shutting_down.
func TestTheEndOfASubscriptionReachesTheClientTyped(t *testing.T) {
	b := newBroker(t)
	c := b.dial(t)
	ctx := testCtx(t)
	s := createStream(t, c, client.StreamConfig{Shards: 1})
	deleted, err := c.Subscribe(ctx, s, 0, client.SubscribeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteStream(ctx, s); err != nil {
		t.Fatal(err)
	}
	if _, err := deleted.Next(ctx); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("subscription to a deleted stream ended with %v, want not_found", err)
	}
	s = createStream(t, c, client.StreamConfig{Shards: 1})
	if _, err := c.Publish(ctx, s, []byte("one")); err != nil {
		t.Fatal(err)
	}
	stopped, err := c.Subscribe(ctx, s, 0, client.SubscribeOptions{Start: client.FromEarliest()})
	if err != nil {
		t.Fatal(err)
	}
	if ev, err := stopped.Next(ctx); err != nil || string(ev.Value) != "one" {
		t.Fatalf("first event %q %v", ev.Value, err)
	}
	stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := b.srv.Stop(stopCtx); err != nil {
		t.Fatal(err)
	}
	_, err = stopped.Next(ctx)
	var se *client.SubscriptionEndedError
	if !errors.As(err, &se) || !errors.Is(err, client.ErrShuttingDown) || se.ResumeOffset != 1 {
		t.Fatalf("subscription ended by a shutdown with %v, want shutting_down resuming at 1", err)
	}
}

// The broker's refusals come back as the client's sentinels.
func TestTheBrokersRefusalsMapToSentinels(t *testing.T) {
	b := newBroker(t)
	c := b.dial(t)
	ctx := testCtx(t)
	missing := client.Stream{Tenant: "acme", Namespace: "e2e", Name: "missing"}
	if _, err := c.Publish(ctx, missing, []byte("v")); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("publish to a missing stream: %v", err)
	}
	s := createStream(t, c, client.StreamConfig{Shards: 2})
	if _, err := c.CreateStream(ctx, s, client.StreamConfig{}); !errors.Is(err, client.ErrAlreadyExists) {
		t.Fatalf("creating it twice: %v", err)
	}
	if _, err := c.Subscribe(ctx, s, 0, client.SubscribeOptions{Start: client.FromOffset(5)}); !errors.Is(err, client.ErrOffsetPastTail) {
		t.Fatalf("subscribing past the tail: %v", err)
	}
	if _, err := c.Subscribe(ctx, s, 9, client.SubscribeOptions{}); err == nil {
		t.Fatal("subscribing to a shard the stream lacks succeeded")
	}
	if _, err := c.CreateStream(ctx, client.Stream{Tenant: "acme", Namespace: "e2e", Name: "bad/name"}, client.StreamConfig{}); !errors.Is(err, client.ErrInvalidArgument) {
		t.Fatalf("an invalid name: %v", err)
	}
	streams, err := c.ListStreams(ctx, "acme", "e2e")
	if err != nil || len(streams) != 1 || streams[0] != s {
		t.Fatalf("list: %v %v", streams, err)
	}
}
