package group

import (
	"errors"
	"math"
	"slices"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/segment"
)

// taker gathers one poll's deliveries; every method runs under the
// group's lock.
type taker struct {
	g        *group
	sh       *engine.Shard
	c        *consumer
	now, vis int64
	dst      []Delivery
	buf      []byte
	max      int // len(dst) the poll may reach
	bytes    int // framed bytes delivered
	bytesMax int
}

// full reports whether the poll has what it asked for.
func (t *taker) full() bool { return len(t.dst) >= t.max || t.bytes >= t.bytesMax }

// fits reports whether a record of size bytes may join the poll: always
// the first.
func (t *taker) fits(size int) bool {
	return len(t.dst) < t.max && (t.bytes == 0 || t.bytes+size <= t.bytesMax)
}

func (t *taker) add(r *segment.Record, s *slot) {
	t.g.claim(s, t.c, t.now, t.vis)
	t.dst = append(t.dst, Delivery{Record: *r, Deliveries: s.deliveries, ClaimedUntil: t.g.sg.m.timeAt(s.until)})
	t.bytes += r.Size()
}

// redeliver walks the handed-out slots when one may have ripened: lapsed
// claims become owed (or dead letters), and owed slots whose delay is over
// are delivered, oldest first, then redriven ones. It leaves g.due at the
// earliest moment a slot left ripens.
func (t *taker) redeliver() error {
	g := t.g
	if t.now < g.due {
		return nil
	}
	g.due = math.MaxInt64
	for i := 0; i < g.win.len(); i++ {
		if err := t.visit(g.win.at(i), g.cursor+int64(i)); err != nil {
			return err
		}
	}
	if len(g.again) == 0 {
		return nil
	}
	// In offset order, as the window's: a redrive hands its records out
	// oldest first (the map's own order is random).
	g.againOrder = g.againOrder[:0]
	for o := range g.again {
		g.againOrder = append(g.againOrder, o)
	}
	slices.Sort(g.againOrder)
	for _, o := range g.againOrder {
		if s := g.again[o]; s != nil {
			if err := t.visit(s, o); err != nil {
				return err
			}
		}
	}
	return nil
}

// visit looks at one handed-out slot: lapses its claim when due, delivers
// it when owed and ripe.
func (t *taker) visit(s *slot, o int64) error {
	g := t.g
	if s.state == slotClaimed {
		if s.until > t.now {
			g.due = min(g.due, s.until)
			return nil
		}
		g.unclaim(s)
		g.stats.lapsed++
		g.sg.m.counters.lapsed.Add(1)
		if err := g.owe(s, o, t.now, 0, ReasonLapsed); err != nil {
			return err
		}
	}
	if s.state != slotOwed {
		return nil
	}
	if s.until > t.now || t.full() {
		g.due = min(g.due, max(s.until, t.now))
		return nil
	}
	return t.deliverOwed(s, o)
}

// deliverOwed reads one owed record again; one retention removed is
// finished and counted instead.
func (t *taker) deliverOwed(s *slot, o int64) error {
	before := len(t.buf)
	out, _, err := t.sh.Read(o, 1, t.buf)
	if errors.Is(err, engine.ErrOffsetBelowStart) {
		return t.g.skip(s, o)
	}
	if err != nil {
		return err
	}
	it := segment.NewIter(out[before:])
	r, ok := it.Next()
	if !ok || r.Offset != o {
		return t.g.skip(s, o) // compacted away: as gone as a retained record
	}
	if !t.fits(r.Size()) {
		t.g.due = t.now
		return nil
	}
	t.buf = out
	t.add(&r, s)
	t.g.stats.redelivered++
	t.g.sg.m.counters.redelivered.Add(1)
	return nil
}

// fresh hands out records never delivered, from the group's frontier,
// while the poll wants more and the window has room.
func (t *taker) fresh() error {
	g := t.g
	room := g.sg.m.opts.WindowRecords
	for !t.full() && g.win.len() < room && g.next < t.sh.End() {
		want := min(t.bytesMax-t.bytes, (t.max-len(t.dst))*g.avgBytes*5/4+segment.RecordOverhead)
		before := len(t.buf)
		out, next, err := t.sh.Read(g.next, want, t.buf)
		if errors.Is(err, engine.ErrOffsetBelowStart) {
			if err := g.skipRetained(t.sh.Start()); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		if next == g.next {
			return nil
		}
		progress := g.next
		t.buf = out[:t.handOut(out, before, room)]
		if len(out) == before && next > g.next {
			g.skipGap(next, room) // a gap compaction left up to the end
		}
		if g.next == progress {
			return nil // the next record does not fit this poll
		}
	}
	return nil
}

// handOut claims the records read into out[before:] in order, and returns
// where the bytes of the last one taken end.
func (t *taker) handOut(out []byte, before, room int) int {
	g := t.g
	keep, read, n, delivered := before, 0, 0, uint64(0)
	it := segment.NewIter(out[before:])
	for r, ok := it.Next(); ok; r, ok = it.Next() {
		read += r.Size()
		n++
		if !t.fits(r.Size()) || g.win.len() >= room {
			break
		}
		g.skipGap(r.Offset, room)
		g.next = r.Offset + 1
		if r.Flags&segment.FlagControl != 0 || g.dead[r.Offset] != nil || g.again[r.Offset] != nil {
			g.win.push(slot{state: slotDone}) // not for consumers, or finished already
			continue
		}
		g.win.push(slot{})
		t.add(&r, g.win.at(g.win.len()-1))
		delivered++
		keep = before + it.Pos()
	}
	g.stats.delivered += delivered
	g.sg.m.counters.delivered.Add(delivered)
	if n > 0 {
		g.avgBytes = (3*g.avgBytes + read/n) / 4
	}
	return keep
}

// skipGap finishes the offsets from the frontier to upTo that the log no
// longer holds, counting each as skipped.
func (g *group) skipGap(upTo int64, room int) {
	for g.next < upTo && g.win.len() < room {
		g.win.push(slot{state: slotDone})
		g.next++
		g.countSkips(1)
	}
}

// skip finishes a handed-out record the log no longer holds.
func (g *group) skip(s *slot, o int64) error {
	g.countSkips(1)
	return g.finish(s, o)
}

func (g *group) countSkips(n int64) {
	g.stats.skipped += uint64(n)
	g.sg.m.counters.retentionSkips.Add(uint64(n))
}

// skipRetained moves the group past every record below start, the
// shard's first, that it had not finished: retention outranks the group.
// Each is counted. Claims on them end (an ack of one is then a no-op).
func (g *group) skipRetained(start int64) error {
	for o, s := range g.again {
		if o < start && s.state != slotDying {
			if err := g.skip(s, o); err != nil {
				return err
			}
		}
	}
	if g.cursor >= start {
		return nil
	}
	for i := 0; i < g.win.len() && g.cursor+int64(i) < start; i++ {
		s, o := g.win.at(i), g.cursor+int64(i)
		switch s.state {
		case slotDone:
		case slotDying:
			// Its dead letter is on its way: track it apart, so the cursor
			// can pass a record that is gone anyway.
			moved := *s
			g.again[o] = &moved
			s.state = slotDone
		default:
			if err := g.skip(s, o); err != nil {
				return err
			}
		}
	}
	if err := g.advance(); err != nil || g.win.len() > 0 || g.next >= start {
		return err
	}
	g.countSkips(start - g.next - g.finishedIn(g.next, start))
	g.next = start
	return g.advance()
}

// finishedIn counts the dead and redriven records in [from, to): records
// the group finished, or tracks apart, that the frontier had not reached.
func (g *group) finishedIn(from, to int64) int64 {
	n := int64(0)
	for o := range g.dead {
		if o >= from && o < to {
			n++
		}
	}
	for o := range g.again {
		if o >= from && o < to {
			n++
		}
	}
	return n
}
