package group

import (
	"fmt"
	"time"

	"github.com/felixbroker/felix/engine"
)

// Ack finishes records the consumer was handed. An offset is refused (and
// listed in a *ClaimError; the others are applied) only when another
// consumer's claim stands on it, when it was never delivered, or when it
// is being dead-lettered; a late ack, after the claim lapsed, is taken
// while nobody else holds the record. Acking a finished record is a
// no-op. The cursor then moves over every finished record at its head,
// never past an unfinished one.
func (m *Manager) Ack(k Key, who string, offsets []int64) error {
	return m.settle(k, who, offsets, true, func(g *group, c *consumer, s *slot, o, now int64) bool {
		switch {
		case s == nil:
			return o < g.next // finished below the cursor, or never delivered
		case s.state == slotDone:
			return true
		case s.state == slotDying, s.state == slotClaimed && s.holder != c && s.until > now:
			return false
		}
		g.stats.acked++
		g.settleErr = g.finish(s, o)
		return true
	})
}

// Nack gives records back: each is owed again after delay (0: at once),
// or dead-lettered when it has had MaxDeliveries. Only the consumer
// holding the claim may nack (a claim that lapsed and was processed is
// refused).
func (m *Manager) Nack(k Key, who string, offsets []int64, delay time.Duration) error {
	if delay < 0 || delay > NackDelayMax {
		return fmt.Errorf("%w: nack delay %v not in 0..%v", ErrInvalid, delay, NackDelayMax)
	}
	return m.settle(k, who, offsets, true, func(g *group, c *consumer, s *slot, o, now int64) bool {
		if s == nil || s.state != slotClaimed || s.holder != c {
			return false
		}
		g.unclaim(s)
		g.stats.nacked++
		m.counters.nacked.Add(1)
		g.settleErr = g.owe(s, o, now, int64(delay), ReasonNacked)
		g.wakeAfter = g.wakeAfter || delay == 0
		return true
	})
}

// Extend moves the deadline of standing claims to by from now. A claim
// that already lapsed is refused: the record may be owed to others.
func (m *Manager) Extend(k Key, who string, offsets []int64, by time.Duration) error {
	if by <= 0 || by > VisibilityMax {
		return fmt.Errorf("%w: extension %v not in (0, %v]", ErrInvalid, by, VisibilityMax)
	}
	return m.settle(k, who, offsets, false, func(g *group, c *consumer, s *slot, o, now int64) bool {
		if s == nil || s.state != slotClaimed || s.holder != c || s.until <= now {
			return false
		}
		s.until = now + int64(by)
		return true
	})
}

// Reject dead-letters records the consumer holds at once, whatever their
// deliveries, with detail (up to DetailBytesMax) as the reason.
func (m *Manager) Reject(k Key, who string, offsets []int64, detail string) error {
	if len(detail) > DetailBytesMax {
		return fmt.Errorf("%w: reject detail of %d bytes, at most %d", ErrInvalid, len(detail), DetailBytesMax)
	}
	return m.settle(k, who, offsets, true, func(g *group, c *consumer, s *slot, o, now int64) bool {
		if s == nil || s.state != slotClaimed || s.holder != c {
			return false
		}
		g.settleErr = g.die(s, o, ReasonRejected, c.name+": "+detail)
		return true
	})
}

// settle applies rule to each offset under the group's lock, then moves
// the cursor. rule reports whether it took the offset; it may leave a log
// failure in g.settleErr, which stops the call. A call that logs (logs:
// an ack, nack or reject) is refused before it changes anything while a
// group log waits for space (heal.go).
func (m *Manager) settle(k Key, who string, offsets []int64, logs bool, rule func(g *group, c *consumer, s *slot, o, now int64) bool) error {
	if err := checkSettle(who, offsets); err != nil {
		return err
	}
	var refused []int64
	var heldBy map[int64]string
	var quorum quorumWait
	err := m.withGroup(k, func(g *group) error {
		g.quorum = quorumWait{}
		defer func() { quorum, g.quorum = g.quorum, quorumWait{} }()
		if logs {
			if err := g.sg.refusal(); err != nil {
				return err
			}
		}
		c, now := g.consumer(who), m.now()
		full, acked := g.win.len() >= m.opts.WindowRecords, g.stats.acked
		g.settleErr, g.wakeAfter = nil, false
		for _, o := range offsets {
			if s := g.find(o); !rule(g, c, s, o, now) {
				refused = append(refused, o)
				if s != nil && s.holder != nil && s.holder != c {
					if heldBy == nil {
						heldBy = map[int64]string{}
					}
					heldBy[o] = s.holder.name
				}
			}
			if g.settleErr != nil {
				return g.settleErr
			}
		}
		m.counters.acked.Add(g.stats.acked - acked)
		err := g.advance()
		if g.wakeAfter || full && g.win.len() < m.opts.WindowRecords {
			g.wake.fire()
		}
		return err
	})
	if err == nil {
		err = quorum.await() // a Quorum stream's: once a majority holds what it logged (quorum.go)
	}
	if err == nil && refused != nil {
		err = &ClaimError{Offsets: refused, HeldBy: heldBy}
	}
	return err
}

// OffsetsMax bounds the offsets of one Ack, Nack, Extend or Reject.
const OffsetsMax = PollRecordsMax

func checkSettle(who string, offsets []int64) error {
	if len(offsets) == 0 || len(offsets) > OffsetsMax {
		return fmt.Errorf("%w: %d offsets, 1..%d allowed", ErrInvalid, len(offsets), OffsetsMax)
	}
	return engine.CheckName("consumer", who)
}
