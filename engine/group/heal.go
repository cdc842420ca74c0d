package group

import (
	"errors"
	"fmt"

	"github.com/felixbroker/felix/engine/shardlog"
)

// A group log that ran out of space serves again once space is back,
// without a restart: its shardlog.Healer reopens it from disk (retrying
// with backoff; nothing waits for it), and takeLog puts it in place and
// rebuilds every group of the shard from the two logs, as a restart
// would. Meanwhile an ack, nack, reject, redrive or delete is refused
// before it changes anything, with the log's refusal (ErrNoSpace:
// storage_full, send it again), and a poll goes on handing out what is
// readable: a cursor move or dead letter it cannot log waits in memory
// (unlogged). A log failed with another cause (EIO) stays failed until a
// restart.

// takeLog puts n, the group log l reopened, in l's place (the Healer's
// TakeFunc). Under shardGroups.mu, so no operation runs, it makes the
// other log's appends visible (its dead letters in flight, its cursor
// moves), rebuilds the shard's groups from n and the other log as a
// restart does (their cursors and dead letters are what the logs hold; a
// cursor move or dead letter the failed log lost is lost, as in a crash),
// then swaps n in (a replicated shard's log held as its part in place of
// the old: replicated.go) and gives each group its rebuilt state. What was in
// flight is dropped, as at a restart: those records are delivered again.
// A rebuild that cannot read the logs leaves everything as it was, and the
// reopen is tried again.
func (l *groupLog) takeLog(old, n *shardlog.Log) error {
	sg := l.sg
	sg.mu.Lock()
	defer sg.mu.Unlock()
	if sg.closed != nil {
		return sg.closed
	}
	cursors, dead := n, sg.deadLog.log()
	if l == sg.deadLog {
		cursors, dead = sg.cursors.log(), n
	}
	other := sg.cursors
	if l == sg.cursors {
		other = sg.deadLog
	}
	if other.heal.Err() == nil { // a failed log has nothing left to make visible
		_ = other.log().Sync()
	}
	fresh := &shardGroups{m: sg.m, shard: sg.shard, id: sg.id, gen: sg.gen, cursors: sg.cursors, deadLog: sg.deadLog,
		groups: map[string]*group{}, latest: map[string]int64{}}
	if err := fresh.rebuildFrom(cursors, dead); err != nil {
		return fmt.Errorf("felix/group: rebuilding the groups of %s: %w", l.name, err)
	}
	if sg.held {
		if err := l.rehold(old, n); err != nil { // replicated.go: n is the part now
			return err
		}
	}
	l.heal.Swap(n)
	sg.adopt(fresh)
	return nil
}

// adopt takes in the groups a rebuild made: a group still open takes its
// rebuilt state in place (a waiting poll holds it), a group only the logs
// hold joins, one they no longer hold goes. sg.mu held.
func (sg *shardGroups) adopt(fresh *shardGroups) {
	for name, g := range sg.groups {
		f := fresh.groups[name]
		g.mu.Lock()
		if f == nil {
			g.deleted = true
			delete(sg.groups, name)
		} else {
			g.reset(f)
		}
		g.mu.Unlock()
		g.wake.fire()
	}
	for name, f := range fresh.groups {
		if sg.groups[name] == nil {
			f.sg = sg
			sg.groups[name] = f
		}
	}
	sg.latestMu.Lock()
	sg.latest = fresh.latest
	sg.latestMu.Unlock()
}

// reset gives the group the state f was rebuilt with: its cursor and dead
// letters as the logs hold them, nothing in flight. Its counters go on.
// g.mu held.
func (g *group) reset(f *group) {
	g.cursor, g.logged, g.next, g.due = f.cursor, f.logged, f.next, f.due
	g.win = window{}
	g.owed, g.claimed = f.owed, 0
	g.dead, g.again, g.consumers = f.dead, f.again, f.consumers
	g.commits.take() // answers about dead letters of the old state: the logs now say where they stand
}

// refusal is nil unless one of the group logs failed for lack of space and
// waits to be reopened; then it is what an append to that log is told, so
// that an operation that logs is refused before it changes anything.
func (sg *shardGroups) refusal() error {
	if err := sg.cursors.heal.Refusal(); err != nil {
		return err
	}
	return sg.deadLog.heal.Refusal()
}

// unlogged is nil for a group log's refusal of a write (out of space, or
// failed), err otherwise: for an operation that reads (a poll, a
// describe) and must go on while the log cannot take its cursor move or
// dead letter. What it could not log stays in memory, for the next
// operation to log again, or for the log's reopen to replace with what
// the logs hold.
func unlogged(err error) error {
	if errors.Is(err, shardlog.ErrPoisoned) {
		return nil
	}
	return err
}
