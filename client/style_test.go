package client

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// Group options are plain values, applied in order: the last of a kind
// wins.
func TestGroupOptionsAreValuesTheLastOfAKindWins(t *testing.T) {
	c := &Client{}
	g := c.Group(testStream, 2, "workers", WithConsumer("a"), WithClaim(time.Second), WithConsumer("b"))
	if g.Consumer() != "b" || g.claim != time.Second || g.shard != 2 {
		t.Fatalf("consumer %q claim %v shard %d", g.Consumer(), g.claim, g.shard)
	}
	if g := c.Group(testStream, 0, "workers"); g.Consumer() == "" || g.claim != 0 {
		t.Fatalf("defaults: consumer %q claim %v", g.Consumer(), g.claim)
	}
}

// An offset is an int64, and no record has a negative one: a settle or a
// redrive naming one is refused before anything is sent.
func TestANegativeOffsetIsRefusedBeforeSending(t *testing.T) {
	var sent atomic.Int64
	b := newFakeBroker(t, func(fc *fakeConn, f wire.Frame) {
		sent.Add(1)
		fc.fail(f.RequestID, wire.CodeInternal, "unexpected", wire.Details{})
	})
	g := dialFake(t, b).Group(testStream, 0, "workers")
	ctx := testCtx(t)
	for what, err := range map[string]error{
		"ack":     g.Ack(ctx, 3, -1),
		"nack":    g.Nack(ctx, 0, -1),
		"extend":  g.Extend(ctx, time.Second, -1),
		"async":   g.AckAsync(ctx, -1).Wait(ctx),
		"redrive": func() error { _, _, err := g.Redrive(ctx, -1); return err }(),
		"dead":    func() error { after := int64(-1); _, _, err := g.DeadLetters(ctx, &after, 0); return err }(),
	} {
		var se *ServerError
		if !errors.Is(err, ErrInvalidArgument) || !errors.As(err, &se) || !se.Local {
			t.Errorf("%s of offset -1: %v, want a local invalid_argument", what, err)
		}
	}
	if n := sent.Load(); n != 0 {
		t.Fatalf("%d requests reached the broker", n)
	}
}

// The client's own types carry what the wire's did: a refusal's details
// convert shard and offsets to int and int64, and the limits a client
// sets reach the session's cap.
func TestTheClientsOwnTypesConvertTheWires(t *testing.T) {
	d := detailsFrom(wire.Details{Shard: wire.U32(3), Offset: wire.U64(42), FirstMissedOffset: wire.U64(7),
		Limit: wire.LimitKeyBytes, Feature: wire.FeatureCache})
	if *d.Shard != 3 || *d.Offset != 42 || *d.FirstMissedOffset != 7 || d.Limit != "key_bytes_max" || d.Feature != FeatureCache {
		t.Fatalf("details %+v", d)
	}
	if l := (Limits{KeyBytesMax: 100}).wire(); l.KeyBytesMax != 100 || limitsFrom(l) != (Limits{KeyBytesMax: 100}) {
		t.Fatalf("limits %+v", l)
	}
	if Code(wire.CodeNotLeader).String() != "not_leader" || !Code(wire.CodeNotLeader).Retryable() ||
		SentinelFor(Code(wire.CodeForbidden)) != ErrForbidden {
		t.Fatal("a Code says what the wire's does")
	}
}
