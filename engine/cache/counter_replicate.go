package cache

import (
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment/vfs"
)

// A replicated shard's counters (replicate.go): their log is opened with
// the shard, before any add, and held as part 1; the sums are folded from
// it whenever the part leads at a generation they were not folded at,
// adds carry that generation, and nothing is added or read while it does
// not lead. The part's own Leading decides, not the primary's: a new
// leader of the shard first adopts the longest counters tail its
// followers hold (the replica's, before it leads the part), and the
// counters must not be folded or added to before that is in.

// openReplicated holds l, the counters log just opened, as part 1; the
// sums are folded once the shard leads. mu held.
func (cs *counterSlot) openReplicated(fs vfs.FS, dir string, l *shardlog.Log) error {
	p, err := cs.sh.c.hold(cs.sh, engine.PartCounters, fs, dir, l)
	if err != nil {
		l.Close()
		return err
	}
	cs.part = p
	cs.logs = shardlog.NewHealer(l, cs.takeLog, nil) // heal.go
	cs.sums, cs.appended, cs.compacts = map[string]*counter{}, l.End(), l.Stats().Bytes
	return nil
}

// openEager opens a replicated shard's counters log at the shard's open,
// so that a follower holds it, and ships into it, from the start.
func (cs *counterSlot) openEager() error {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.open()
}

// leadLocked is nil when the counters may serve and append now, at gen:
// always for a cache of one replica; for a replicated one while part 1
// leads, after folding the log again when the generation it leads at is
// new (the sums in memory may hold what a follower's truncation took, and
// miss what its replica appended). mu held; it is let go of across the
// log's Sync, which a failed flush ends only after telling the adds in
// flight, whose waiters take mu.
func (cs *counterSlot) leadLocked() error {
	p := cs.part
	if p == nil {
		return nil
	}
	for {
		gen, ok := p.Leading()
		switch {
		case !ok:
			return cs.sh.c.notLeader(cs.sh.index)
		case gen == cs.led:
			return nil
		}
		l := cs.logs.Log()
		cs.mu.Unlock()
		err := l.Sync() // every record the replica appended is then visible
		cs.mu.Lock()
		switch {
		case cs.failErr != nil:
			return cs.failErr
		case cs.logs.Log() != l || cs.led == gen:
			continue // reopened, or folded by another operation, meanwhile
		case err != nil:
			cs.logFailed(l, err)
			return err
		}
		return cs.foldAt(l, gen)
	}
}

// foldAt folds l into the sums for a leadership at gen. mu held.
func (cs *counterSlot) foldAt(l *shardlog.Log, gen uint32) error {
	sums, err := fold(l)
	if err != nil {
		return cs.foldError(err)
	}
	cs.sums, cs.appended, cs.compacts = sums, l.End(), l.Stats().Bytes
	cs.gen, cs.led, cs.lastGen = gen, gen, l.LastGeneration()
	cs.sh.c.store.opts.Logger.Info("cache shard's counters lead", "cache", cs.sh.c.info.ID.String(),
		"shard", cs.sh.index, "generation", gen, "counters", len(sums), "end", cs.appended)
	return nil
}

// serving brings the counters in line with the shard's leadership now
// (Reconcile), rather than at the next counter operation.
func (cs *counterSlot) serving() error {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.logs == nil {
		return nil
	}
	if cs.failErr != nil {
		return cs.failErr
	}
	return cs.leadLocked()
}

// append appends entries at the offset the writer expects next (it is
// appended), at gen; a replicated shard's with AppendAt after the
// generation of its last record, so a log the replica moved refuses them
// (moved). mu held.
func (cs *counterSlot) append(l *shardlog.Log, entries []shardlog.Entry, w shardlog.Waiter) (int64, error) {
	if cs.part == nil {
		return l.Append(entries, cs.gen, w)
	}
	if err := l.AppendAt(cs.appended, cs.lastGen, entries, cs.gen, w); err != nil {
		return 0, err
	}
	cs.lastGen = cs.gen
	return cs.appended, nil
}

// leadLost is an add's answer when its append found the leadership over:
// the sums are folded again when the shard next leads. mu held.
func (cs *counterSlot) leadLost() error {
	cs.led = 0
	return cs.sh.c.notLeader(cs.sh.index)
}

// leadsAt reports whether the counters part leads at gen now; mu held,
// or p taken under it.
func leadsAt(p *heldPart, gen uint32) bool {
	g, ok := p.Leading()
	return ok && g == gen
}

// shipped tells the replica that records were appended; mu held.
func (cs *counterSlot) shipped() {
	if cs.part != nil {
		cs.part.Appended()
	}
}

// compactFloor is compactFloor for the counters log, which a replicated
// shard compacts only while it leads; mu held.
func (cs *counterSlot) compactFloor() (int64, bool) {
	if cs.part == nil {
		return -1, true
	}
	return compactFloor(cs.part, cs.leadLocked() == nil)
}

// rehold holds n, the counters log the Healer reopened, in place of the
// old one; mu held. On an error the old part stays (released).
func (cs *counterSlot) rehold(n *shardlog.Log) error {
	if cs.part == nil {
		return nil
	}
	fs, dir := cs.dir()
	p, err := cs.sh.c.rehold(cs.part, cs.sh, engine.PartCounters, fs, dir, n)
	if err != nil {
		return err
	}
	cs.part = p
	return nil
}

// reholdCurrent holds the counters log again as it is, after the shard's
// primary was held anew (reholdValues). A failure stops the counters:
// they would append to a log nothing replicates.
func (cs *counterSlot) reholdCurrent() error {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.part == nil || cs.logs == nil {
		return nil
	}
	if err := cs.rehold(cs.logs.Log()); err != nil {
		cs.fail(err)
		return err
	}
	return nil
}
