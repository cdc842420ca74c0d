package group

import (
	"fmt"

	"github.com/felixbroker/felix/engine"
)

// Description is where a group stands.
type Description struct {
	Key    Key
	Cursor int64 // every record below is finished (durable through the cursor log)
	Next   int64 // records at or above were never delivered
	End    int64 // the shard's end
	Lag    int64 // End - Cursor

	InFlight    int // records under a standing claim
	Owed        int // records delivered before and owed again (lapsed, nacked, redriven)
	DeadLetters int
	Consumers   int // consumer names the group remembers

	// Counters since this broker opened the group (they restart with it).
	Delivered      uint64 // first deliveries
	Redelivered    uint64
	Acked          uint64
	Nacked         uint64
	Lapsed         uint64
	DeadLettered   uint64
	Redriven       uint64
	RetentionSkips uint64 // records retention removed before the group finished them
}

// Describe reports where a group stands, after processing the claims that
// lapsed and the records retention removed.
func (m *Manager) Describe(k Key) (Description, error) {
	var d Description
	err := m.withGroup(k, func(g *group) error {
		t := taker{g: g, now: m.now()} // max 0: lapses are processed, nothing delivered
		if err := unlogged(g.skipRetained(g.sg.shard.Start())); err != nil {
			return err
		}
		if err := unlogged(t.redeliver()); err != nil {
			return err
		}
		d = g.describe(k)
		return nil
	})
	return d, err
}

func (g *group) describe(k Key) Description {
	end := g.sg.shard.End()
	st := g.stats
	return Description{
		Key: k, Cursor: g.cursor, Next: g.next, End: end, Lag: end - g.cursor,
		InFlight: g.claimed, Owed: g.owed, DeadLetters: len(g.dead), Consumers: len(g.consumers),
		Delivered: st.delivered, Redelivered: st.redelivered, Acked: st.acked, Nacked: st.nacked,
		Lapsed: st.lapsed, DeadLettered: st.deadLettered, Redriven: st.redriven, RetentionSkips: st.skipped,
	}
}

// List describes every group of a shard, by name.
func (m *Manager) List(id engine.StreamID, shard int) ([]Description, error) {
	sg, err := m.shardOf(Key{Stream: id, Shard: shard})
	if err != nil {
		return nil, err
	}
	var out []Description
	for _, name := range sg.names() {
		d, err := m.Describe(Key{Stream: id, Shard: shard, Group: name})
		if err == ErrNotFound {
			continue // deleted meanwhile
		}
		if err != nil {
			return out, err
		}
		out = append(out, d)
	}
	return out, nil
}

// DeadLetters lists up to n of a group's dead letters, from offset from,
// in offset order.
func (m *Manager) DeadLetters(k Key, from int64, n int) ([]DeadLetter, error) {
	if n < 1 || n > PollRecordsMax {
		return nil, fmt.Errorf("%w: %d dead letters, 1..%d allowed", ErrInvalid, n, PollRecordsMax)
	}
	var out []DeadLetter
	err := m.withGroup(k, func(g *group) error {
		out = g.deadLetters(from, n)
		return nil
	})
	return out, err
}

// Redrive makes dead letters owed again, their delivery counts reset: the
// ones at offsets, or every one when offsets is nil. It returns how many
// it redrove; offsets that are not dead letters are listed in an error
// matching ErrNotDead (the others are redriven). A redriven record is
// delivered before new ones; if retention removed it meanwhile, it is
// skipped and counted.
func (m *Manager) Redrive(k Key, offsets []int64) (int, error) {
	if len(offsets) > OffsetsMax {
		return 0, fmt.Errorf("%w: %d offsets, at most %d", ErrInvalid, len(offsets), OffsetsMax)
	}
	n := 0
	err := m.withGroup(k, func(g *group) error {
		if err := g.sg.refusal(); err != nil {
			return err // heal.go: refused before anything is redriven
		}
		var err error
		n, err = g.redrive(offsets)
		m.counters.redriven.Add(uint64(n))
		return err
	})
	return n, err
}
