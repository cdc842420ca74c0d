package cache

import (
	"fmt"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/shardlog"
)

// A shard whose values log failed for lack of space serves again once
// space is back, without a restart: the log's shardlog.Healer reopens it
// from disk (retrying with backoff; nothing waits for it) and takeLog puts
// it in place, rebuilding the index from it as a restart would. The
// counters' log heals the same way (counterSlot.takeLog). A log failed
// with another cause (EIO) stays failed until the cache is opened again.

// logFailed stops the shard after an append to l was refused or failed
// with err, and has l reopened when the cause was lack of space.
func (sh *shard) logFailed(l *shardlog.Log, err error) {
	sh.fail(err)
	sh.logs.Failed(l, err)
}

// takeLog puts n, the failed values log old reopened, in the shard's
// place (the Healer's TakeFunc). The shard is stopped until it returns:
// every read and write is refused, so nothing but the watches touches the
// log and nothing touches the index. It swaps n in, rebuilds a new index
// from n as a restart does (the old one may name writes the disk never
// got), then under the writer's lock puts the new index in, hands the
// records n recovered past old's end to the live watches (so they see no
// gap: nothing new can be visible on n before), and lets the shard serve
// again. A reopened log it cannot read back leaves the shard stopped with
// that error. A replicated shard's replica lets go of old and holds n
// first (one that cannot is an error: n is closed, the reopen tried
// again), and its watches are handed the recovered records only while it
// still leads at the generation it was built at (else they end: the
// leadership they belong to is over).
func (sh *shard) takeLog(old, n *shardlog.Log) error {
	if err := sh.usable(); closing(err) {
		return err
	}
	if err := sh.reholdValues(n); err != nil {
		return err
	}
	recovered, err := shardlog.Recovered(old, n)
	sh.logs.Swap(n)
	var fresh *shard
	if err == nil {
		fresh, err = sh.rebuilt()
	}
	if err != nil {
		sh.refail(fmt.Errorf("felix/cache: reading back shard %d's reopened log: %w", sh.index, err))
		return nil
	}
	sh.writeMu.Lock()
	defer sh.writeMu.Unlock()
	sh.install(fresh)
	sh.watchMu.Lock()
	if sh.leadsAt(sh.led.Load()) {
		sh.fanOutLocked(recovered)
	} else {
		sh.endLeadershipLocked()
	}
	sh.watchMu.Unlock()
	sh.revive()
	return nil
}

// reholdValues holds n, the values log reopened, as the replicated
// shard's part 0 in place of the old log, and then its counters log
// again: letting go of a shard's primary may let go of its other parts
// too (the broker's replication does). Counters that cannot be held again
// stop; the values serve on.
func (sh *shard) reholdValues(n *shardlog.Log) error {
	p := sh.primary()
	if p == nil {
		return nil
	}
	fs, root := sh.c.store.fsFor(sh.c.info.Config)
	np, err := sh.c.rehold(p, sh, engine.PartCacheValues, fs, valuesDir(root, sh.c.info.ID, sh.index), n)
	if err != nil {
		return err
	}
	sh.valuesPart.Store(np)
	if err := sh.counters.reholdCurrent(); err != nil {
		sh.c.store.opts.Logger.Error("cache shard's counters stopped: their log could not be held again with the reopened values log",
			"cache", sh.c.info.ID.String(), "shard", sh.index, "err", err)
	}
	return nil
}

// rebuilt replays the current log into a new index, as a restart does, and
// returns it in a scratch shard that shares the log, the store and the
// index's seed (keys are routed with it unlocked) and has a value cache
// number of its own.
func (sh *shard) rebuilt() (*shard, error) {
	fresh := &shard{c: sh.c, index: sh.index, gen: sh.gen, logs: sh.logs, values: sh.values, quorum: sh.quorum,
		ix: index{seed: sh.ix.seed, main: map[hashKey]entry{}}}
	fresh.valueNo.Store(sh.c.store.opened.Add(1))
	if _, err := fresh.rebuild(); err != nil {
		return nil, err
	}
	return fresh, nil
}

// install takes in the index, the end and the value cache number of a
// rebuild, forgetting the writes the old log never made visible (their
// copies in the value cache stay under the old number, never met again).
// writeMu held.
func (sh *shard) install(fresh *shard) {
	sh.ixMu.Lock()
	sh.ix.main, sh.ix.collide = fresh.ix.main, fresh.ix.collide
	sh.deleting, sh.deletingSweepAt = fresh.deleting, fresh.deletingSweepAt
	sh.ixMu.Unlock()
	sh.appended, sh.lastGen = fresh.appended, sh.log().LastGeneration()
	sh.pending = pendingRing{slots: sh.pending.slots}
	sh.valueNo.Store(fresh.valueNo.Load())
	if fresh.expiries.Load() {
		sh.expiries.Store(true)
	}
	sh.compactedBytes.Store(sh.log().Stats().Bytes)
}

// revive lets the shard serve again; a closing shard stays stopped.
func (sh *shard) revive() {
	sh.visMu.Lock()
	defer sh.visMu.Unlock()
	if closing(sh.failErr) {
		return
	}
	sh.failErr, sh.refusal = nil, nil
	sh.failed.Store(false)
	sh.c.store.opts.Logger.Info("cache shard serves again", "cache", sh.c.info.ID.String(), "shard", sh.index)
}

// refail stops the shard with err in place of the failure it had, unless
// it is closing.
func (sh *shard) refail(err error) {
	sh.visMu.Lock()
	defer sh.visMu.Unlock()
	if closing(sh.failErr) {
		return
	}
	sh.failErr, sh.refusal = err, err
	sh.failed.Store(true)
	sh.c.store.opts.Logger.Error("cache shard failed", "cache", sh.c.info.ID.String(), "shard", sh.index, "err", err)
}

// logFailed stops the counters after an append to l was refused or failed
// with err, and has l reopened when the cause was lack of space; mu held.
func (cs *counterSlot) logFailed(l *shardlog.Log, err error) {
	cs.fail(err)
	cs.logs.Failed(l, err)
}

// takeLog puts n, the failed counters log old reopened, in place (the
// Healer's TakeFunc): it folds n as a restart does (the sums in memory may
// hold adds the disk never got; n's own count those it recovered past
// old's end), then swaps n and its sums in under mu, and the counters serve
// again. A reopened log it cannot fold leaves them stopped with that error.
func (cs *counterSlot) takeLog(_, n *shardlog.Log) error {
	sums, err := fold(n)
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if closing(cs.failErr) {
		return cs.failErr
	}
	if err := cs.rehold(n); err != nil {
		return err
	}
	cs.logs.Swap(n)
	if err != nil {
		cs.failErr = cs.foldError(err)
		cs.visMu.Lock()
		cs.visErr = cs.failErr
		cs.visMu.Unlock()
		return nil
	}
	cs.sums, cs.appended, cs.compacts, cs.failErr = sums, n.End(), n.Stats().Bytes, nil
	cs.lastGen = n.LastGeneration()
	cs.visMu.Lock()
	cs.visErr = nil
	cs.visMu.Unlock()
	return nil
}
