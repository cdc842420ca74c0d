package group

import (
	"fmt"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment"
)

// A stream shard of replication factor above 1 has its two group logs
// replicated beside its records, at the stream's consistency (Quorum:
// quorum.go), through Options.Replication (engine/replication_part.go): every replica opens
// them (HoldReplicas) and holds each as a part of the shard's replication
// for the shard's lifetime. While this broker leads the shard (Leading)
// its groups serve and append at Leading's generation; the replica ships
// every record to the followers. While it does not, nothing is served
// from the logs or appended to them (the replica appends its leader's
// records, and may truncate). When Leading's generation is not the one
// the groups were built at, they are rebuilt from the logs first: the
// cursors and dead letters the other leaders wrote are what this one
// resumes from, and what this broker held in flight is dropped, as at a
// restart.

// heldPart is a group log's part of its shard's replication.
type heldPart struct{ engine.Part }

// replicated reports whether the groups of a shard of the stream info
// describes replicate: a durable stream of replication factor above 1, on
// a broker with a replication.
func (m *Manager) replicated(info engine.StreamInfo) bool {
	return m.opts.Replication != nil && info.Config.Durable && info.Config.ReplicationFactor > 1
}

// HoldReplicas opens the group logs of a replicated stream shard held on
// this broker, whether it leads it or follows it, and holds them as parts
// of the shard's replication, so that a follower receives its leader's
// group logs and holds them at a failover. The broker calls it for every
// replicated stream shard it holds, at each reconcile: it is idempotent.
// The logs stay open, and held, until the engine stops the shard (or the
// Manager closes). A shard that does not replicate (replication factor 1,
// not durable, no Options.Replication) has nothing to hold: nil. A shard
// not held here is refused as engine.Stream.Shard refuses it.
func (m *Manager) HoldReplicas(id engine.StreamID, shard int) error {
	s, err := m.eng.Stream(id)
	if err != nil {
		return err
	}
	if !m.replicated(s.Info()) {
		return nil
	}
	sh, err := s.Shard(shard)
	if err != nil {
		return err
	}
	_, err = m.groupsOf(sh, true)
	return err
}

// holdParts holds both logs as parts of the shard's replication.
func (sg *shardGroups) holdParts() error {
	if err := sg.cursors.hold(sg.cursors.log()); err != nil {
		return err
	}
	return sg.deadLog.hold(sg.deadLog.log())
}

// hold holds lg, the group log's log now, as its part.
func (l *groupLog) hold(lg *shardlog.Log) error {
	sg := l.sg
	cons := engine.ConsistencyLeader
	if sg.quorum {
		cons = engine.ConsistencyQuorum
	}
	p, err := sg.m.opts.Replication.HoldPart(engine.PartLog{ID: sg.id, Shard: sg.shard.Index(), Part: l.part,
		FS: sg.m.eng.FS(), Dir: l.name, Log: lg, Consistency: cons})
	if err != nil {
		return fmt.Errorf("felix/group: replicating %s: %w", l.name, err)
	}
	l.held.Store(&heldPart{p})
	return nil
}

// release stops replicating the log, if it was held. The log stays open.
func (l *groupLog) release() {
	if p := l.held.Swap(nil); p != nil {
		p.Release()
	}
}

// rehold holds n, the log reopened in place of old, as the part old was
// (heal.go), this leadership's appends going on at its end. When n cannot
// be held, old is held again (it stays the current log, and the reopen is
// tried again).
func (l *groupLog) rehold(old, n *shardlog.Log) error {
	l.release()
	err := l.hold(n)
	if err != nil {
		if berr := l.hold(old); berr != nil {
			l.sg.m.opts.Logger.Warn("group log no longer replicated: holding it again failed", "log", l.name, "err", berr)
		}
		return err
	}
	l.resetLed(n)
	return nil
}

// leading is Leading of the log's part: false once it is not held.
func (l *groupLog) leading() (uint32, bool) {
	if p := l.held.Load(); p != nil {
		return p.Leading()
	}
	return 0, false
}

// appendGen is the generation an append to the log goes at, and the part
// to tell of it: the stream's generation and none for a shard not held;
// for a held one the generation its groups were built at, while this
// broker leads the shard there, and otherwise a *engine.NotLeaderError.
// The caller holds shardGroups.mu.
func (l *groupLog) appendGen() (uint32, engine.Part, error) {
	sg := l.sg
	if !sg.held {
		return sg.gen, nil, nil
	}
	if p := l.held.Load(); p != nil {
		if gen, ok := p.Leading(); ok && sg.built && gen == sg.gen {
			return gen, p.Part, nil
		}
	}
	return 0, nil, sg.notLeader()
}

// compactKeep is what a compaction of the log keeps: for a held log also
// every record at or above the part's CompactBelow (a follower may not
// hold it yet, and must never be sent a run of offsets with holes) and
// every control record (a generation's start). Not ok for a held log no
// longer held.
func (l *groupLog) compactKeep() (shardlog.KeepFunc, bool) {
	if !l.sg.held {
		return l.keep, true
	}
	p := l.held.Load()
	if p == nil {
		return nil, false
	}
	below := p.CompactBelow()
	return func(r *segment.Record) bool {
		return r.Offset >= below || r.Flags&segment.FlagControl != 0 || l.keep(r)
	}, true
}

// leading reports whether this broker leads the held shard, and at which
// generation: both parts must say so, at one generation.
func (sg *shardGroups) leading() (uint32, bool) {
	gen, ok := sg.cursors.leading()
	dgen, dok := sg.deadLog.leading()
	return gen, ok && dok && gen == dgen
}

// unavailable is why the shard's groups cannot serve now: closed, or a
// held shard this broker does not lead at the generation they were built
// at. sg.mu held (read or write).
func (sg *shardGroups) unavailable() error {
	if sg.closed != nil {
		return sg.closed
	}
	if !sg.held {
		return nil
	}
	if gen, ok := sg.leading(); !ok || !sg.built || gen != sg.gen || sg.moved.Load() {
		return sg.notLeader()
	}
	return nil
}

// notLeader refuses what only the shard's leader serves, naming the
// leader Ownership knows, if another.
func (sg *shardGroups) notLeader() error {
	addr := ""
	if local, leader := sg.m.owner.Leader(sg.id, sg.shard.Index()); !local {
		addr = leader
	}
	return &engine.NotLeaderError{Stream: sg.id, Shard: sg.shard.Index(), Leader: addr}
}

// lead makes a held shard's groups serve at the generation this broker
// leads the shard at, rebuilding them from the logs when they were built
// at another (or not since a Release, or a log moved under their
// appends). It refuses with
// *engine.NotLeaderError while this broker does not lead the shard. nil
// at once for a shard not held.
func (sg *shardGroups) lead() error {
	if !sg.held {
		return nil
	}
	gen, ok := sg.leading()
	sg.mu.RLock()
	closed, current := sg.closed, sg.built && sg.gen == gen && !sg.moved.Load()
	sg.mu.RUnlock()
	switch {
	case closed != nil:
		return closed
	case !ok:
		return sg.notLeader()
	case current:
		return nil
	}
	return sg.rebuildAt(gen)
}

// rebuildAt rebuilds the groups from both logs, as a restart does, to
// serve at generation gen: a group still open takes its rebuilt state in
// place (adopt), what it had in flight dropped.
func (sg *shardGroups) rebuildAt(gen uint32) error {
	sg.mu.Lock()
	defer sg.mu.Unlock()
	if sg.closed != nil {
		return sg.closed
	}
	if sg.built && sg.gen == gen && !sg.moved.Load() {
		return nil
	}
	sg.moved.Store(false) // no append runs now: one that finds the log moved after this sets it again
	for _, l := range []*groupLog{sg.cursors, sg.deadLog} {
		if l.heal.Err() == nil {
			_ = l.log().Sync() // the records the replica appended as a follower, all visible
		}
		l.resetLed(l.log())
	}
	fresh := &shardGroups{m: sg.m, shard: sg.shard, id: sg.id, gen: gen, cursors: sg.cursors, deadLog: sg.deadLog,
		groups: map[string]*group{}, latest: map[string]int64{}}
	if err := fresh.rebuildFrom(sg.cursors.log(), sg.deadLog.log()); err != nil {
		return fmt.Errorf("felix/group: rebuilding the groups of %s shard %d at generation %d: %w", sg.id, sg.shard.Index(), gen, err)
	}
	sg.adopt(fresh)
	sg.gen, sg.built = gen, true
	sg.m.opts.Logger.Info("groups rebuilt from their replicated logs", "stream", sg.id.String(), "shard", sg.shard.Index(),
		"generation", gen, "groups", len(sg.groups))
	return nil
}

// unbuild marks a held shard's groups stale: they serve again only once
// rebuilt from the logs (Manager.Release). Waiting polls wake.
func (sg *shardGroups) unbuild() {
	sg.mu.Lock()
	sg.built = false
	for _, g := range sg.groups {
		g.wake.fire()
	}
	sg.mu.Unlock()
}
