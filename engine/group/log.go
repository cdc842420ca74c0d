package group

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment"
)

// groupLog is one of a shard's two group logs, compacted in the background
// once CompactRecords were appended since the last compaction, and
// reopened once space is back when it ran out (heal.go).
type groupLog struct {
	sg         *shardGroups
	heal       *shardlog.Healer
	name       string
	part       int                      // its part number in a replicated shard (engine.PartGroupCursors, engine.PartDeadLetters)
	held       atomic.Pointer[heldPart] // a held shard's: the log's part of the replication; nil otherwise
	led        ledAppends               // a held shard's: where this leadership's next append goes
	keep       shardlog.KeepFunc
	appended   atomic.Int64
	compacting atomic.Bool    // a background compaction is started or running
	compactMu  sync.Mutex     // one compaction at a time
	wg         sync.WaitGroup // compactions in flight, for close
}

// log is the log the group log serves from now.
func (l *groupLog) log() *shardlog.Log { return l.heal.Log() }

// appendAt appends entries and returns the first one's log offset; w is
// told when they are durable (nil: nobody waits). The caller holds
// shardGroups.mu (read), so the log is not replaced meanwhile.
func (l *groupLog) appendAt(entries []shardlog.Entry, w shardlog.Waiter) (int64, error) {
	gen, p, err := l.appendGen()
	if err != nil {
		return 0, err
	}
	lg := l.log()
	var at int64
	if p == nil {
		at, err = lg.Append(entries, gen, w)
	} else {
		if w != nil && l.sg.quorum {
			w = &vouchWaiter{p: p, gen: gen, w: w} // told once a majority holds them (quorum.go)
		}
		at, err = l.appendLed(lg, entries, gen, w) // replicated.go
	}
	if err != nil {
		l.heal.Failed(lg, err)
		return 0, err
	}
	if p != nil {
		p.Appended() // shipped at once, not at the replica's next look
	}
	if l.appended.Add(int64(len(entries))) >= int64(l.sg.m.opts.CompactRecords) && l.compacting.CompareAndSwap(false, true) {
		l.appended.Store(0)
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			defer l.compacting.Store(false)
			l.compact()
		}()
	}
	return at, nil
}

// appendWait appends entries and waits until they are durable.
func (l *groupLog) appendWait(entries []shardlog.Entry) (int64, error) {
	gen, p, err := l.appendGen()
	if err != nil {
		return 0, err
	}
	lg := l.log()
	var at int64
	if p == nil {
		at, err = lg.AppendWait(entries, gen)
	} else {
		w := make(waitChan, 1)
		if at, err = l.appendLed(lg, entries, gen, w); err == nil {
			p.Appended()
			if err = <-w; err == nil && l.sg.quorum {
				p.Vouch(gen, at, at+int64(len(entries))-1, w)
				if err = <-w; err != nil {
					return at, err // the log holds it; a majority may not (not a log failure)
				}
			}
		}
	}
	if err != nil {
		l.heal.Failed(lg, err)
	}
	return at, err
}

// compact drops every record that no longer says where anything stands.
// Called with a count in wg, so close waits for it.
func (l *groupLog) compact() error {
	l.compactMu.Lock()
	defer l.compactMu.Unlock()
	l.heal.Lock() // no reopen while the log is compacted
	defer l.heal.Unlock()
	keep, ok := l.compactKeep()
	if !ok {
		return nil // a held log no longer held: nothing says what its followers lack
	}
	st, err := l.log().Compact(keep)
	switch {
	case err == nil:
		l.sg.m.opts.Logger.Debug("group log compacted", "log", l.name, "records", st.Records, "kept", st.Kept)
	case errors.Is(err, shardlog.ErrNothingToCompact), errors.Is(err, shardlog.ErrClosed),
		errors.Is(err, shardlog.ErrCompactionStale):
		return nil
	default:
		l.sg.m.opts.Logger.Warn("group log compaction failed", "log", l.name, "err", err)
	}
	return err
}

// close waits for a compaction in progress and closes the log, stopping
// a reopen in progress (whose takeLog takes shardGroups.mu: the caller
// must not hold it).
func (l *groupLog) close() error {
	l.wg.Wait()
	return l.heal.Close()
}

// replay reads the whole of lg, one of the group logs, in offset order.
func replay(lg *shardlog.Log, visit func(r *segment.Record) error) error {
	var buf []byte
	for from := lg.Start(); from < lg.End(); {
		out, next, err := lg.Read(from, 1<<20, buf[:0])
		if err != nil {
			return err
		}
		it := segment.NewIter(out)
		for r, ok := it.Next(); ok; r, ok = it.Next() {
			if err := visit(&r); err != nil {
				return err
			}
		}
		if err := it.Err(); err != nil {
			return err
		}
		buf, from = out, next
	}
	return nil
}
