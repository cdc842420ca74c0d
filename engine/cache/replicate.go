package cache

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

// A cache created with a replication factor above 1 has each shard on
// that many brokers (Options.Placement holds it on each), and both logs
// of a held shard, its values (engine.PartCacheValues) and its counters
// (engine.PartCounters), replicate through Options.Replication at the
// cache's consistency (engine/replication_part.go; Quorum: quorum.go). On every broker holding the
// shard both logs are opened at once (the counters' too, before any add,
// so a follower holds it from the start) and held. Part 0's Leading
// decides for the values (and part 1's, likewise, for the counters:
// counter_replicate.go):
//
//   - While it says ok at generation g, the shard serves: its index and
//     its counters' sums are built from the logs at g (rebuilt, after a
//     Sync makes every record the replica appended visible, whenever g is
//     not the generation they were last built at), every append carries g
//     and is followed by Part.Appended, and each write is acknowledged as
//     on a broker alone, once the local log has it at its FsyncMode (and,
//     at Quorum, once its part vouches for it: quorum.go).
//   - Otherwise every operation is refused with *engine.NotLeaderError
//     naming the leader Options.Owner knows; nothing appends to the logs
//     and nothing is read from them: the replica appends the leader's
//     records (and may truncate), and what that makes visible reaches no
//     watch. The watches of a leadership end with the NotLeaderError (as a
//     released shard's do) once a record it did not append becomes
//     visible, once Reconcile sees it lead no more, and at the next
//     leadership's rebuild, so a client watches again at the new leader.
//
// A compaction runs only while the shard leads, and keeps every record at
// or above Part.CompactBelow, which every follower has not yet been sent
// in full. The generation a shard was built at (led) is 0 until it first
// leads: generations start at 1.

// heldPart is a held part. Released once, whoever lets go of it first
// (a stop, a log the Healer replaced).
type heldPart struct {
	engine.Part
	released atomic.Bool
}

// release stops replicating the part, once.
func (p *heldPart) release() {
	if p.released.CompareAndSwap(false, true) {
		p.Part.Release()
	}
}

// replicated reports whether the cache's shards replicate their logs.
func (c *Cache) replicated() bool { return c.info.Config.ReplicationFactor > 1 }

// checkReplication refuses a replication factor above 1 that this store
// cannot serve, as the engine refuses a stream's (engine.checkReplication).
func (s *Store) checkReplication(cfg Config) error {
	switch {
	case cfg.ReplicationFactor <= 1:
		return nil
	case s.opts.Replication == nil:
		return fmt.Errorf("%w: replication factor %d: this broker runs alone and holds one replica of each shard; a replication factor above 1 needs a cluster of at least that many brokers",
			ErrInvalidConfig, cfg.ReplicationFactor)
	case !cfg.Durable:
		return fmt.Errorf("%w: replication factor %d: a cache that is not durable has no log to replicate (set durable, or a replication factor of 1)",
			ErrInvalidConfig, cfg.ReplicationFactor)
	}
	return nil
}

// hold registers l, part `part` of shard sh, with the replication, at
// the cache's consistency (a Quorum shard's values hand their commits to
// sh: quorum.go).
func (c *Cache) hold(sh *shard, part int, fs vfs.FS, dir string, l *shardlog.Log) (*heldPart, error) {
	id, i := c.info.ID, sh.index
	pl := engine.PartLog{Cache: true, ID: engine.StreamID{Tenant: id.Tenant, Namespace: id.Namespace, Name: id.Name},
		Shard: i, Part: part, FS: fs, Dir: dir, Log: l, Consistency: engine.ConsistencyLeader}
	if sh.quorum {
		pl.Consistency = engine.ConsistencyQuorum
		if part == engine.PartCacheValues {
			pl.OnCommit = sh.onCommitted
		}
	}
	p, err := c.store.opts.Replication.HoldPart(pl)
	if err != nil {
		return nil, fmt.Errorf("felix/cache: replicating %s shard %d part %d: %w", id, i, part, err)
	}
	return &heldPart{Part: p}, nil
}

// primary is the shard's part 0, nil when the cache has one replica.
func (sh *shard) primary() *heldPart { return sh.valuesPart.Load() }

// leadsAt reports whether the shard serves now at gen: part 0 leads at
// gen. Always true for a cache of one replica.
func (sh *shard) leadsAt(gen uint32) bool {
	p := sh.primary()
	if p == nil {
		return true
	}
	g, ok := p.Leading()
	return ok && g == gen
}

// serving is nil when the shard may serve a read or start a watch: always
// for a cache of one replica; for a replicated one while it leads, once
// built at the generation it leads at (rebuilding first when that is new).
func (sh *shard) serving() error {
	p := sh.primary()
	if p == nil {
		return nil
	}
	if gen, ok := p.Leading(); ok && gen == sh.led.Load() {
		return nil
	}
	sh.writeMu.Lock()
	defer sh.writeMu.Unlock()
	return sh.leadLocked()
}

// readLeads is nil when a read that began with the shard built at led may
// answer: the shard still leads at led, so no replica touched the log in
// between (a replica appends only while following, at a higher
// generation, and generations never fall).
func (sh *shard) readLeads(led uint32) error {
	if sh.leadsAt(led) {
		return nil
	}
	return sh.c.notLeader(sh.index)
}

// leadLocked is nil when a write may append now, at writeGen: always for a
// cache of one replica; for a replicated one while part 0 leads, after
// rebuilding the shard when the generation it leads at is new. writeMu
// held.
func (sh *shard) leadLocked() error {
	p := sh.primary()
	if p == nil {
		return nil
	}
	gen, ok := p.Leading()
	switch {
	case !ok:
		return sh.c.notLeader(sh.index)
	case gen == sh.led.Load():
		return nil
	}
	return sh.takeLead(gen)
}

// takeLead builds the shard from its log for a leadership at gen: it
// syncs the log (every record the replica appended while following is
// then visible), replays it into a new index as a restart does, ends the
// watches of any earlier leadership and serves at gen. writeMu held.
func (sh *shard) takeLead(gen uint32) error {
	began := time.Now()
	l := sh.log()
	if err := l.Sync(); err != nil { // a failed fdatasync poisons the log: the shard stops, as a failed append does
		sh.logFailed(l, err)
		return sh.refused(fmt.Errorf("felix/cache: syncing shard %d's log to lead it: %w", sh.index, err))
	}
	fresh, err := sh.rebuilt()
	if err != nil {
		return sh.refused(fmt.Errorf("felix/cache: rebuilding shard %d to lead it: %w", sh.index, err))
	}
	sh.install(fresh)
	sh.writeGen = gen
	sh.watchMu.Lock()
	sh.endLeadershipLocked()
	sh.takeCommitted(gen) // a Quorum shard's reads start at its leadership's watermark (quorum.go)
	sh.led.Store(gen)
	sh.watchMu.Unlock()
	sh.ixMu.Lock()
	sh.sweepDeletingLocked() // the rebuild's deletes below the watermark
	sh.ixMu.Unlock()
	sh.wakeReaders()
	sh.c.store.opts.Logger.Info("cache shard leads", "cache", sh.c.info.ID.String(), "shard", sh.index,
		"generation", gen, "keys", fresh.ix.len(), "end", sh.appended, "rebuild", time.Since(began))
	return nil
}

// moved reports whether an append was refused because the log is not
// where the writer left it: the replica truncated it or appended to it, so
// the leadership the writer checked is over.
func moved(err error) bool {
	var de *shardlog.DivergenceError
	return errors.As(err, &de) || errors.Is(err, shardlog.ErrStaleGeneration)
}

// leadLost is a write's answer when its append found the leadership over
// (moved): nothing was appended, but the index may name the offset it
// expected, so the shard is built again when it next leads, and the
// leadership's watches end. writeMu held.
func (sh *shard) leadLost() error {
	sh.watchMu.Lock()
	sh.endLeadershipLocked()
	sh.led.Store(0)
	sh.watchMu.Unlock()
	return sh.c.notLeader(sh.index)
}

// endLeadership ends the watches of a leadership that is over with the
// redirect to the leader Options.Owner knows; the shard stays open (a
// follower now, or leading again once rebuilt).
func (sh *shard) endLeadership() {
	sh.watchMu.Lock()
	defer sh.watchMu.Unlock()
	sh.endLeadershipLocked()
}

// endLeadershipLocked is endLeadership with watchMu held.
func (sh *shard) endLeadershipLocked() {
	if len(sh.watches) == 0 {
		return
	}
	nle := sh.c.notLeader(sh.index)
	for w := range sh.watches {
		w.mu.Lock()
		w.end(nle)
		w.mu.Unlock()
		delete(sh.watches, w)
	}
}

// registrable is nil when a watch may join the shard's set now: the shard
// has not stopped and, replicated, leads at the generation it was built
// at (so the watch belongs to this leadership, whose end ends it).
// watchMu held.
func (sh *shard) registrable() error {
	switch {
	case sh.stopped != nil:
		return sh.stopped
	case !sh.leadsAt(sh.led.Load()):
		return sh.c.notLeader(sh.index)
	}
	return nil
}

// ownRecords reports whether records that became visible are this
// leadership's to hand to the watches: always for a cache of one
// replica; for a replicated one while the shard leads at the generation
// it was built at. Otherwise they are the replica's (a follower's
// appends) and the watches of the leadership that ended are ended.
func (sh *shard) ownRecords() bool {
	if sh.primary() == nil || sh.leadsAt(sh.led.Load()) {
		return true
	}
	sh.endLeadership()
	return false
}

// poke brings a replicated shard in line with its leadership after the
// cluster changed (Reconcile): a shard that leads at a new generation is
// rebuilt now rather than at its first operation, and one that leads no
// more ends its watches.
func (sh *shard) poke() {
	p := sh.primary()
	if p == nil || sh.usable() != nil {
		return
	}
	if _, ok := p.Leading(); !ok {
		sh.endLeadership()
		return
	}
	err := sh.serving()
	if err == nil {
		err = sh.counters.serving()
	}
	if err != nil && !released(err) {
		sh.c.store.opts.Logger.Warn("cache shard could not take its leadership; its next operation tries again",
			"cache", sh.c.info.ID.String(), "shard", sh.index, "err", err)
	}
}

// rehold lets go of old, the part held for a log the Healer replaced, and
// holds n in its place. On an error old stays released: the caller stops
// what it serves and the Healer tries the reopen again.
func (c *Cache) rehold(old *heldPart, sh *shard, part int, fs vfs.FS, dir string, n *shardlog.Log) (*heldPart, error) {
	old.release()
	return c.hold(sh, part, fs, dir, n)
}

// compactFloor is where a compaction of a replicated log must keep every
// record from (engine.Part.CompactBelow), and whether it may run at all:
// only while the shard leads at led. A cache of one replica keeps
// nothing for anyone (floor -1).
func compactFloor(p *heldPart, leads bool) (floor int64, ok bool) {
	if p == nil {
		return -1, true
	}
	if !leads {
		return 0, false
	}
	return p.CompactBelow(), true
}

// keepFrom wraps keep so that every record at or above floor is kept.
func keepFrom(floor int64, keep shardlog.KeepFunc) shardlog.KeepFunc {
	if floor < 0 {
		return keep
	}
	return func(r *segment.Record) bool { return r.Offset >= floor || keep(r) }
}
