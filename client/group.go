package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// queueFeatures are the bits of Group and Producer, offered by default.
const queueFeatures = wire.FeatureConsumerGroups | wire.FeatureIdempotentProducers

// Group is one consumer of a consumer group on one shard of a stream: the
// queue way of reading a stream. Records are handed out by Poll, each to
// one consumer at a time under a claim, and finished with Ack, given back
// with Nack, or kept longer with Extend. A claim that lapses makes the
// record owed again, to any consumer; the group's cursor moves only over
// records that were finished. Delivery is at least once: a broker that
// restarts forgets the claims and hands their records out again.
//
// A Group is a handle: it holds no connection of its own and costs nothing
// until used. Its consumer name is random unless WithConsumer sets one;
// claims belong to the name, so a consumer that reconnects (or another
// Client using the same name) can still ack what it was handed. Safe for
// concurrent use; every call is a request on the Client's connection.
type Group struct {
	c        *Client
	stream   Stream
	shard    int
	name     string
	consumer string
	claim    time.Duration
}

// GroupOption adjusts a Group. Options are plain values, as PublishOption
// and WatchOption are: passing them allocates nothing.
type GroupOption struct {
	set      uint8
	consumer string
	claim    time.Duration
}

const (
	optConsumer uint8 = 1 << iota
	optClaim
)

// WithConsumer names the consumer (letters, digits, '.', '_', '-'; at most
// 255 bytes). Two Groups with one name are one consumer: either may ack
// what the other was handed.
func WithConsumer(name string) GroupOption { return GroupOption{set: optConsumer, consumer: name} }

// WithClaim sets how long a polled record stays claimed before it is owed
// again (whole milliseconds; 0, the default, takes the broker's: 30s).
func WithClaim(d time.Duration) GroupOption { return GroupOption{set: optClaim, claim: d} }

// apply sets g's fields from opts, the last of each kind winning.
func (g *Group) apply(opts []GroupOption) {
	for _, o := range opts {
		if o.set&optConsumer != 0 {
			g.consumer = o.consumer
		}
		if o.set&optClaim != 0 {
			g.claim = o.claim
		}
	}
}

// Group returns the consumer group name on one shard of stream, as a
// consumer of it. Nothing is sent: the broker creates the group, from the
// shard's earliest record, on its first poll.
func (c *Client) Group(stream Stream, shard int, name string, opts ...GroupOption) *Group {
	g := &Group{c: c, stream: stream, shard: shard, name: name}
	g.apply(opts)
	if g.consumer == "" {
		g.consumer = randomConsumer()
	}
	return g
}

// randomConsumer is a consumer name no other Group picks.
func randomConsumer() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "c-" + hex.EncodeToString(b[:])
}

// Consumer is the name this Group's claims are held under.
func (g *Group) Consumer() string { return g.consumer }

// Name is the group's name.
func (g *Group) Name() string { return g.name }

func (g *Group) ref() wire.GroupRef {
	return wire.GroupRef{Stream: g.stream.ref(), Shard: uint32(g.shard), Group: bytesOf(g.name), Consumer: bytesOf(g.consumer)}
}

// Message is one record a poll handed to this consumer, claimed by it
// until it is acked, nacked or its claim lapses.
type Message struct {
	Shard  int
	Offset int64
	// Deliveries is how many times the record has been handed out, this
	// time included: above 1 it was handed out before (a claim lapsed, a
	// consumer nacked it, or the broker restarted).
	Deliveries uint32
	Timestamp  time.Time
	Key        []byte
	Value      []byte
}

// Poll asks for up to max records (at most the broker's batch limit),
// waiting up to wait for one when none is owed now (0: answer at once; the
// broker waits at most 10 minutes). It returns an empty slice when the
// wait ran out. Records handed out before and owed again come first, so
// offsets need not increase. The messages' Key and Value share one buffer
// of their own.
//
// The wait is shortened to end before ctx's deadline, so the answer is not
// lost to an abandoned request (records it claimed would lapse unseen).
// A shard this broker does not lead is ErrNotLeader, also when it moves
// during the wait.
func (g *Group) Poll(ctx context.Context, max int, wait time.Duration) ([]Message, error) {
	if max < 1 {
		return nil, localError(&wire.Error{Code: wire.CodeInvalidArgument, Message: "a poll asks for at least one record",
			Details: wire.Details{Field: "max_records"}})
	}
	m := wire.GroupPoll{Group: g.ref(), MaxRecords: uint32(min(max, math.MaxUint32)),
		WaitMillis: millis(waitWithin(ctx, wait)), ClaimMillis: millis(g.claim)}
	var lim wire.Limits
	cl, err := g.c.groupCall(ctx, func(cn *conn) error {
		lim = cn.readLimits
		if uint64(m.MaxRecords) > uint64(cn.limits.BatchRecordsMax) {
			m.MaxRecords = uint32(cn.limits.BatchRecordsMax)
		}
		return nil
	}, func(dst []byte, id uint64) []byte { return wire.AppendGroupPoll(dst, id, m) })
	if err != nil {
		return nil, err
	}
	defer cl.recycle()
	return messagesOf(cl, lim)
}

// waitWithin shortens a poll's wait to end before ctx's deadline: by a
// tenth of the time left, at most a second.
func waitWithin(ctx context.Context, wait time.Duration) time.Duration {
	dl, ok := ctx.Deadline()
	if !ok {
		return wait
	}
	left := time.Until(dl)
	return max(min(wait, left-min(left/10, time.Second)), 0)
}

func millis(d time.Duration) uint32 {
	if d <= 0 {
		return 0
	}
	return uint32(min((d+time.Millisecond-1)/time.Millisecond, math.MaxUint32))
}

// messagesOf decodes a poll's GROUP_RECORDS; the messages alias its body,
// which the call hands over.
func messagesOf(cl *call, lim wire.Limits) ([]Message, error) {
	if cl.ftype != wire.TypeGroupRecords {
		return nil, fmt.Errorf("%w: %v in answer to GROUP_POLL", ErrProtocol, cl.ftype)
	}
	var r wire.GroupRecords
	if err := r.Decode(wire.Frame{Type: cl.ftype, Body: cl.body}, lim); err != nil {
		return nil, fmt.Errorf("%w: GROUP_RECORDS: %w", ErrProtocol, err)
	}
	cl.body = nil // the messages keep it
	out := make([]Message, 0, r.Count)
	for it := r.Records(); it.Next(); {
		rec := it.Record()
		out = append(out, Message{Shard: int(r.Shard), Offset: int64(rec.Offset), Deliveries: rec.DeliveryCount,
			Timestamp: time.Unix(0, rec.Timestamp), Key: rec.Key, Value: rec.Value})
	}
	return out, nil
}

// Ack finishes records this consumer was handed. A record whose claim
// this consumer no longer holds (another consumer's claim stands on it, or
// it was never handed out) is not acked: the error is a *ClaimError
// listing them (errors.Is(err, ErrClaimNotHeld)), and every other offset
// was applied. A late ack, after the claim lapsed and before anyone else
// took the record, is still taken.
func (g *Group) Ack(ctx context.Context, offsets ...int64) error {
	return g.settle(ctx, offsets, func(dst []byte, id uint64) []byte {
		return wire.AppendGroupAck(dst, id, g.ref(), wireOffsets(offsets))
	})
}

// Nack gives records back: each is owed again after delay (0: at once),
// or dead-lettered once it has been delivered the group's most times.
// Offsets this consumer does not hold are reported as by Ack.
func (g *Group) Nack(ctx context.Context, delay time.Duration, offsets ...int64) error {
	return g.settle(ctx, offsets, func(dst []byte, id uint64) []byte {
		return wire.AppendGroupNack(dst, id, g.ref(), millis(delay), wireOffsets(offsets))
	})
}

// Extend keeps claims by longer from now (whole milliseconds, at least
// one). A claim that already lapsed cannot be extended: the record may be
// owed to others, and its offset is reported as by Ack.
func (g *Group) Extend(ctx context.Context, by time.Duration, offsets ...int64) error {
	return g.settle(ctx, offsets, func(dst []byte, id uint64) []byte {
		return wire.AppendGroupExtend(dst, id, g.ref(), millis(by), wireOffsets(offsets))
	})
}

// ClaimError reports the offsets of an Ack, Nack or Extend that were not
// applied because this consumer did not hold their claims; the others
// were.
type ClaimError struct {
	Applied int
	NotHeld []int64
}

func (e *ClaimError) Error() string {
	return fmt.Sprintf("felix/client: %d applied; claims not held on offsets %v", e.Applied, e.NotHeld)
}

// Unwrap makes errors.Is(err, ErrClaimNotHeld) true.
func (e *ClaimError) Unwrap() error { return ErrClaimNotHeld }

func (g *Group) settle(ctx context.Context, offsets []int64, enc func(dst []byte, id uint64) []byte) error {
	if len(offsets) == 0 {
		return nil
	}
	cl, err := g.c.groupCall(ctx, checkOffsets(offsets), enc)
	if err != nil {
		return err
	}
	defer cl.recycle()
	return resultOf(cl, len(offsets))
}

func checkOffsets(offsets []int64) func(cn *conn) error {
	return func(cn *conn) error {
		if len(offsets) > cn.limits.BatchRecordsMax {
			return localError(&wire.LimitError{Limit: wire.LimitBatchRecords, Max: cn.limits.BatchRecordsMax, Got: uint64(len(offsets))})
		}
		return checkNotNegative(offsets)
	}
}

// resultOf reads the GROUP_RESULT answering a settle of n offsets.
func resultOf(cl *call, n int) error {
	if cl.err != nil {
		return cl.err
	}
	if cl.ftype != wire.TypeGroupResult {
		return fmt.Errorf("%w: %v in answer to a group ack, nack or extend", ErrProtocol, cl.ftype)
	}
	var r wire.GroupResult
	if err := r.Decode(wire.Frame{Type: cl.ftype, Body: cl.body}, wire.Limits{BatchRecordsMax: n}); err != nil {
		return fmt.Errorf("%w: GROUP_RESULT: %w", ErrProtocol, err)
	}
	if r.NotHeld.Len() == 0 {
		return nil
	}
	return &ClaimError{Applied: int(r.Applied), NotHeld: clientOffsets(r.NotHeld.AppendTo(nil))}
}

// AckFuture is the outcome of an AckAsync. Safe for concurrent use; any
// number of goroutines may wait.
type AckFuture struct {
	cl    *call // nil when the ack failed before it was sent
	n     int
	taken chan struct{} // closed once err holds the outcome
	err   error
}

// AckAsync is Ack without the wait: it sends the ack and returns, so a
// consumer can poll its next records while the broker applies it (the
// two requests travel together on the connection). ctx bounds only the
// sending. The broker may serve a poll sent after it first: a record
// whose ack is not yet applied is still claimed by this consumer, so it is
// not handed out again meanwhile.
func (g *Group) AckAsync(ctx context.Context, offsets ...int64) *AckFuture {
	f := &AckFuture{n: len(offsets), taken: make(chan struct{})}
	if len(offsets) == 0 {
		close(f.taken)
		return f
	}
	cn, err := g.c.conn(ctx)
	if err == nil && !cn.features.Has(wire.FeatureConsumerGroups) {
		err = notNegotiated(wire.FeatureConsumerGroups)
	}
	if err == nil {
		err = checkOffsets(offsets)(cn)
	}
	if err == nil {
		f.cl, err = cn.send(ctx, newCall(false), func(dst []byte, id uint64) []byte {
			return wire.AppendGroupAck(dst, id, g.ref(), wireOffsets(offsets))
		})
	}
	if err != nil {
		f.cl, f.err = nil, err
		close(f.taken)
	}
	return f
}

// Wait waits for the ack's outcome within ctx, as Ack reports it. ctx
// ending abandons only the wait.
func (f *AckFuture) Wait(ctx context.Context) error {
	if f.cl == nil {
		return f.err
	}
	select {
	case <-f.taken:
		return f.err
	case <-f.cl.done: // the answer's one token: this waiter reads it for all
		f.err = resultOf(f.cl, f.n)
		close(f.taken)
		return f.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// groupCall sends one binary group request and waits for its answer:
// check runs first against the connection (its limits), then enc appends
// the frame. The returned call holds the answer; the caller recycles it.
func (c *Client) groupCall(ctx context.Context, check func(*conn) error, enc func(dst []byte, id uint64) []byte) (*call, error) {
	cn, err := c.conn(ctx)
	if err != nil {
		return nil, err
	}
	if !cn.features.Has(wire.FeatureConsumerGroups) {
		return nil, notNegotiated(wire.FeatureConsumerGroups)
	}
	if err := check(cn); err != nil {
		return nil, err
	}
	return cn.request(ctx, enc)
}

// request sends the frame enc appends and waits for its answer in a
// pooled call, which the caller recycles.
func (c *conn) request(ctx context.Context, enc func(dst []byte, id uint64) []byte) (*call, error) {
	cl, err := c.send(ctx, newCall(true), enc)
	if err != nil {
		return nil, err
	}
	if abandoned, err := cl.wait(ctx); err != nil {
		if !abandoned {
			cl.recycle()
		}
		return nil, err
	}
	return cl, nil
}

// send registers cl and writes the frame enc appends; the answer
// completes cl. On failure cl is recycled and nothing awaits an answer.
func (c *conn) send(ctx context.Context, cl *call, enc func(dst []byte, id uint64) []byte) (*call, error) {
	buf, err := c.beginRequest(ctx, cl)
	if err != nil {
		cl.recycle()
		return nil, err
	}
	start := len(buf)
	buf = enc(buf, cl.id)
	if err := c.limits.CheckFrameSize(len(buf) - start); err != nil {
		c.w.abort(buf[:start])
		c.drop(cl)
		cl.recycle()
		return nil, localError(err)
	}
	c.w.commit(buf)
	return cl, nil
}

// notNegotiated refuses, locally, a request the session cannot carry.
func notNegotiated(f wire.Features) error {
	return localError(&wire.Error{Code: wire.CodeFeatureNotNegotiated,
		Message: "the broker does not serve " + f.String(), Details: wire.Details{Feature: f}})
}
