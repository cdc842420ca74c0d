package group

import (
	"slices"
	"sync"

	"github.com/felixbroker/felix/engine/shardlog"
)

// die dead-letters a slot: its dead letter is appended to the dead-letter
// log and the slot waits in slotDying, holding the cursor back, until the
// log says the letter is durable; the next operation on the group then
// finishes it (applyCommits). A refused append leaves it owed.
func (g *group) die(s *slot, o int64, why Reason, detail string) error {
	switch s.state {
	case slotClaimed:
		g.unclaim(s)
	case slotOwed:
		g.owed--
	}
	ev := deadEvent{kind: kindDead, offset: o, deliveries: s.deliveries, reason: why,
		at: g.sg.m.opts.Clock.Now().UnixNano(), detail: detail}
	dc := &deadCommit{g: g, log: g.sg.deadLog.log(), ev: ev} // not replaced while sg.mu is held
	at, err := g.logDeadAt(&ev, dc)
	if err != nil {
		s.state, s.until = slotOwed, 0
		g.owed++
		g.due = 0
		return err
	}
	dc.logOffset = at // the committer reads it only after the queue's lock
	s.state, s.logOffset = slotDying, at
	return nil
}

// deadCommit is the dead-letter log's Waiter for one dead letter.
type deadCommit struct {
	g         *group
	log       *shardlog.Log // the dead-letter log it was appended to
	ev        deadEvent
	logOffset int64
	err       error
}

// Committed runs on the log's committer: it queues the outcome for the
// group (under the queue's leaf lock, never the group's) and wakes it. A
// failure for lack of space has the log reopened (heal.go).
func (d *deadCommit) Committed(_, _ int64, err error) {
	if err != nil {
		d.g.sg.deadLog.heal.Failed(d.log, err)
	}
	d.err = err
	d.g.commits.push(d)
	d.g.wake.fire()
}

// commitQueue holds the dead letters the log answered, until the group
// applies them. Its lock is a leaf.
type commitQueue struct {
	mu   sync.Mutex
	done []*deadCommit
	took []*deadCommit
}

func (q *commitQueue) push(d *deadCommit) {
	q.mu.Lock()
	q.done = append(q.done, d)
	q.mu.Unlock()
}

// take returns what was queued; the slice is valid until the next take.
func (q *commitQueue) take() []*deadCommit {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.done) == 0 {
		return nil
	}
	clear(q.took)
	q.done, q.took = q.took[:0], q.done
	return q.took
}

// applyCommits finishes the dying slots whose dead letters are durable
// (and makes owed again those whose append failed), then moves the cursor.
func (g *group) applyCommits() error {
	done := g.commits.take()
	for _, d := range done {
		o := d.ev.offset
		s := g.find(o)
		if s == nil || s.state != slotDying || s.logOffset != d.logOffset {
			continue // the group was deleted, or the slot moved on
		}
		if d.err != nil {
			s.state, s.until = slotOwed, 0
			g.owed++
			g.due = 0
			continue
		}
		s.state = slotDone
		delete(g.again, o)
		g.dead[o] = &deadEntry{logOffset: d.logOffset, DeadLetter: DeadLetter{
			Offset: o, Deliveries: d.ev.deliveries, Reason: d.ev.reason, Detail: d.ev.detail,
			At: unixTime(d.ev.at),
		}}
		g.stats.deadLettered++
		g.sg.m.counters.deadLettered.Add(1)
	}
	if len(done) == 0 {
		return nil
	}
	return g.advance()
}

// liveDeadRecord is the dead-letter log offset of the record that says
// where o stands now, -1 when none does: what compaction keeps.
func (g *group) liveDeadRecord(o int64) int64 {
	if d := g.dead[o]; d != nil {
		return d.logOffset
	}
	if s := g.find(o); s != nil && (s.state == slotDying || g.again[o] == s) {
		return s.logOffset
	}
	return -1
}

// deadLetters lists up to n dead letters from offset from, in offset order.
func (g *group) deadLetters(from int64, n int) []DeadLetter {
	offsets := make([]int64, 0, len(g.dead))
	for o := range g.dead {
		if o >= from {
			offsets = append(offsets, o)
		}
	}
	slices.Sort(offsets)
	out := make([]DeadLetter, 0, min(n, len(offsets)))
	for _, o := range offsets[:min(n, len(offsets))] {
		out = append(out, g.dead[o].DeadLetter)
	}
	return out
}

// redrive makes the dead letters at offsets (every one when nil) owed
// again, with their delivery counts reset, and logs that it did.
func (g *group) redrive(offsets []int64) (int, error) {
	if offsets == nil {
		for o := range g.dead {
			offsets = append(offsets, o)
		}
		slices.Sort(offsets)
	}
	n := 0
	var missing []int64
	for _, o := range offsets {
		if g.dead[o] == nil {
			missing = append(missing, o)
			continue
		}
		at, err := g.logDeadAt(&deadEvent{kind: kindRedriven, offset: o}, nil)
		if err != nil {
			return n, err
		}
		delete(g.dead, o)
		g.again[o] = &slot{state: slotOwed, logOffset: at}
		g.owed++
		g.due = 0
		g.stats.redriven++
		n++
	}
	if n > 0 {
		g.wake.fire()
	}
	if missing != nil {
		return n, &redriveError{offsets: missing}
	}
	return n, nil
}
