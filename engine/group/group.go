package group

import (
	"math"
	"sync"

	"github.com/felixbroker/felix/engine/shardlog"
)

// group is one consumer group on one shard. Its fields below mu are
// guarded by mu, taken with the shard's groups read-locked (see the lock
// order in doc.go).
type group struct {
	sg   *shardGroups
	name string
	key  []byte // name, for log records
	// quorum is what the operation running under mu appended and must see
	// vouched for before it returns (a Quorum stream's, quorum.go).
	quorum quorumWait

	mu      sync.Mutex
	cursor  int64 // every offset below is finished; durable through the cursor log
	logged  int64 // the cursor the cursor log last got
	next    int64 // offsets at or above were never handed out
	win     window
	due     int64 // no claim lapses and no owed slot ripens before this (clock ns); a lower bound
	owed    int   // slots in slotOwed, window and redriven
	claimed int   // slots in slotClaimed, window and redriven
	dead    map[int64]*deadEntry
	again   map[int64]*slot // redriven records, wherever they lie
	// againOrder is redeliver's scratch: again's offsets, sorted.
	againOrder []int64
	consumers  map[string]*consumer
	avgBytes   int // running estimate of a record's framed size, to size reads
	stats      groupStats
	deleted    bool
	settleErr  error             // scratch of settle: a log failure met by a rule
	wakeAfter  bool              // scratch of settle: a nack made records owed now
	value      []byte            // scratch for a log record's value
	entry      [1]shardlog.Entry // scratch for a log append

	commits commitQueue // dead letters made durable (or failed), for the next operation to apply
	wake    signal      // fired when records may have become deliverable
	// deadScanned is when expireDead last looked at every dead letter
	// (wall clock ns; dead_expiry.go).
	deadScanned int64
}

// deadEntry is a dead letter and the dead-letter log record that holds it.
type deadEntry struct {
	DeadLetter
	logOffset int64
}

// groupStats are a group's counters (under group.mu).
type groupStats struct {
	delivered, redelivered, acked, nacked, lapsed, deadLettered, redriven, skipped uint64
}

func newGroup(sg *shardGroups, name string, cursor int64) *group {
	return &group{
		sg: sg, name: name, key: []byte(name),
		cursor: cursor, logged: cursor, next: cursor, due: math.MaxInt64,
		dead: map[int64]*deadEntry{}, again: map[int64]*slot{}, consumers: map[string]*consumer{},
		avgBytes: 256,
	}
}

// consumer returns the interned consumer of that name, forgetting the
// names that hold no claims once there are too many.
func (g *group) consumer(name string) *consumer {
	if c := g.consumers[name]; c != nil {
		return c
	}
	if len(g.consumers) >= consumersKept {
		for n, c := range g.consumers {
			if c.claims == 0 {
				delete(g.consumers, n)
			}
		}
	}
	c := &consumer{name: name}
	g.consumers[name] = c
	return c
}

// find returns the slot of a handed-out record: in the window, or
// redriven. nil when o was never handed out or is finished below the
// cursor.
func (g *group) find(o int64) *slot {
	if len(g.again) > 0 {
		if s := g.again[o]; s != nil {
			return s // a redriven record: its window slot, if any, is done
		}
	}
	if o >= g.cursor && o < g.next {
		return g.win.at(int(o - g.cursor))
	}
	return nil
}

// claim hands a slot to c until now+vis.
func (g *group) claim(s *slot, c *consumer, now, vis int64) {
	if s.state == slotOwed {
		g.owed--
	}
	s.state, s.holder, s.until = slotClaimed, c, now+vis
	s.deliveries++
	c.claims++
	g.claimed++
	g.due = min(g.due, s.until)
}

// unclaim takes a claimed slot from its holder; the caller gives it its
// next state.
func (g *group) unclaim(s *slot) {
	s.holder.claims--
	s.holder, s.state = nil, slotLoose
	g.claimed--
}

// finish marks a slot done (acked, skipped); o is its offset. A redriven
// record's completion is logged, since the cursor may be past it.
func (g *group) finish(s *slot, o int64) error {
	switch s.state {
	case slotClaimed:
		g.unclaim(s)
	case slotOwed:
		g.owed--
	}
	s.state = slotDone
	if a, ok := g.again[o]; ok && a == s {
		delete(g.again, o)
		return g.logDead(&deadEvent{kind: kindDone, offset: o}, nil)
	}
	return nil
}

// owe makes a slot owed again not before now+delay, or dead-letters it
// when it has had its deliveries.
func (g *group) owe(s *slot, o, now, delay int64, why Reason) error {
	if max := g.sg.m.opts.MaxDeliveries; max >= 0 && int(s.deliveries) >= max {
		return g.die(s, o, why, "")
	}
	s.state, s.until = slotOwed, now+delay
	g.owed++
	g.due = min(g.due, s.until)
	return nil
}

// advance moves the cursor over the finished slots at its head and logs
// the new cursor.
func (g *group) advance() error {
	for g.win.len() > 0 && g.win.at(0).state == slotDone {
		g.win.pop()
		g.cursor++
	}
	if g.win.len() == 0 {
		g.cursor = g.next
	}
	if g.cursor == g.logged || g.deleted {
		return nil
	}
	return g.logCursor()
}

// logCursor appends the cursor to the cursor log; the append is not
// waited for: a cursor lost to a crash only redelivers.
func (g *group) logCursor() error {
	g.value = appendCursorValue(g.value[:0], g.cursor)
	g.entry[0] = shardlog.Entry{Key: g.key, Value: g.value}
	at, err := g.sg.cursors.appendAt(g.entry[:], nil)
	if err != nil {
		return err
	}
	g.noteQuorum(g.sg.cursors, at)
	g.sg.noteLatest(g.name, at)
	g.logged = g.cursor
	return nil
}

// logDead appends one event to the dead-letter log and returns its
// offset through at (when not nil).
func (g *group) logDead(ev *deadEvent, w shardlog.Waiter) error {
	_, err := g.logDeadAt(ev, w)
	return err
}

func (g *group) logDeadAt(ev *deadEvent, w shardlog.Waiter) (int64, error) {
	g.value = appendDeadValue(g.value[:0], ev)
	g.entry[0] = shardlog.Entry{Key: g.key, Value: g.value}
	at, err := g.sg.deadLog.appendAt(g.entry[:], w)
	if err == nil {
		g.noteQuorum(g.sg.deadLog, at)
	}
	return at, err
}
