package client

import (
	"context"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// GroupInfo is where a group stands on its shard.
type GroupInfo struct {
	Stream Stream
	Shard  int
	Group  string
	// Cursor: every record below it is finished, durably.
	Cursor int64
	// NextOffset: records at or above it were never handed out.
	NextOffset int64
	// EndOffset is the shard's end; Lag is EndOffset - Cursor.
	EndOffset int64
	Lag       uint64
	// InFlight counts records under a standing claim; Owed those handed
	// out before and owed again (a claim lapsed, a nack, a redrive).
	InFlight uint64
	Owed     uint64
	// DeadLetters counts the records the group gave up on.
	DeadLetters uint64
	// RetentionSkipped counts records retention removed before the group
	// finished them: work the queue dropped, counted rather than silent.
	RetentionSkipped uint64
	Consumers        uint64 // consumer names the group remembers

	// Counters since the broker opened the group (they restart with it).
	Delivered, Redelivered, Acked, Nacked, Lapsed, DeadLettered, Redriven uint64
}

// Describe reports where the group stands. ErrNotFound if it was never
// polled (nor created otherwise).
func (g *Group) Describe(ctx context.Context) (GroupInfo, error) {
	var w wire.GroupInfo
	if err := g.c.groupRoundTrip(ctx, &wire.GroupDescribe{Stream: g.stream.ref(), Shard: uint32(g.shard), Group: g.name}, &w); err != nil {
		return GroupInfo{}, err
	}
	return GroupInfo{
		Stream: streamFrom(w.Stream), Shard: int(w.Shard), Group: w.Group,
		Cursor: int64(w.Cursor), NextOffset: int64(w.NextOffset), EndOffset: int64(w.EndOffset), Lag: w.Lag,
		InFlight: w.InFlight, Owed: w.Owed, DeadLetters: w.DeadLetters, RetentionSkipped: w.RetentionSkipped,
		Consumers: w.Consumers, Delivered: w.Delivered, Redelivered: w.Redelivered, Acked: w.Acked,
		Nacked: w.Nacked, Lapsed: w.Lapsed, DeadLettered: w.DeadLettered, Redriven: w.Redriven,
	}, nil
}

// DeadLetter is a record the group gave up on.
type DeadLetter struct {
	Offset     int64
	Deliveries uint32
	Reason     string    // why, in words
	Detail     string    // a rejecting consumer's words, if any
	At         time.Time // when
}

// DeadLetters lists up to limit of the group's dead letters (0: the
// broker's page, 1000), in offset order, from the first after offset
// after (nil: from the first). more says another page follows.
func (g *Group) DeadLetters(ctx context.Context, after *int64, limit int) (dead []DeadLetter, more bool, err error) {
	var from *uint64
	if after != nil {
		if *after < 0 {
			return nil, false, localInvalid("after", "an offset is never negative")
		}
		a := uint64(*after)
		from = &a
	}
	req := &wire.GroupDeadLetters{Stream: g.stream.ref(), Shard: uint32(g.shard), Group: g.name, AfterOffset: from,
		Limit: uint32(max(limit, 0))}
	var w wire.GroupDeadLettersResult
	if err := g.c.groupRoundTrip(ctx, req, &w); err != nil {
		return nil, false, err
	}
	dead = make([]DeadLetter, 0, len(w.DeadLetters))
	for _, d := range w.DeadLetters {
		dl := DeadLetter{Offset: int64(d.Offset), Deliveries: d.DeliveryCount, Reason: d.Reason, Detail: d.Detail}
		if d.At != 0 {
			dl.At = time.Unix(0, d.At)
		}
		dead = append(dead, dl)
	}
	return dead, w.More, nil
}

// Redrive makes dead letters owed again, their delivery counts reset: the
// ones at offsets, or every one when none is given. It returns how many
// it redrove, and the offsets it was given that were not dead letters.
func (g *Group) Redrive(ctx context.Context, offsets ...int64) (redriven uint64, notDead []int64, err error) {
	if err := checkNotNegative(offsets); err != nil {
		return 0, nil, err
	}
	var w wire.GroupRedriveResult
	req := &wire.GroupRedrive{Stream: g.stream.ref(), Shard: uint32(g.shard), Group: g.name, Offsets: wireOffsets(offsets)}
	if err := g.c.groupRoundTrip(ctx, req, &w); err != nil {
		return 0, nil, err
	}
	return w.Redriven, clientOffsets(w.NotDead), nil
}

// ListGroups names the consumer groups of one shard of a stream.
func (c *Client) ListGroups(ctx context.Context, stream Stream, shard int) ([]string, error) {
	var w wire.GroupListResult
	if err := c.groupRoundTrip(ctx, &wire.GroupList{Stream: stream.ref(), Shard: uint32(shard)}, &w); err != nil {
		return nil, err
	}
	return w.Groups, nil
}

// groupRoundTrip is roundTrip for the group requests, refused locally when
// the session lacks consumer groups.
func (c *Client) groupRoundTrip(ctx context.Context, req, answer wire.Control) error {
	s, err := c.Session(ctx)
	if err != nil {
		return err
	}
	if !s.Features.Has(FeatureConsumerGroups) {
		return notNegotiated(wire.FeatureConsumerGroups)
	}
	return c.roundTrip(ctx, req, answer)
}
