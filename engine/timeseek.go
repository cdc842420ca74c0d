package engine

import (
	"errors"

	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment"
)

// timeScanBytes is what each read of a scan for a time asks for.
const timeScanBytes = 16 << 10

// ShardUsage is what a shard holds, for a describe: its bytes and the
// times of its oldest and newest records (0 when it holds none).
type ShardUsage struct {
	Bytes               int64
	FirstTime, LastTime int64 // unix ns
}

// OffsetForTime returns the offset of the first record of the shard whose
// timestamp is at or after ts (unix ns), control records left out; End
// when there is none. A durable shard finds it from its segments' newest
// times and sparse indexes and reads about one index interval
// (shardlog.Log.OffsetForTime); a shard in memory scans its bounded log.
// It reads the disk: call it off an event loop.
func (sh *Shard) OffsetForTime(ts int64) (int64, error) {
	var off int64
	var err error
	switch d, ok := sh.log.(*diskLog); {
	case ok:
		err = d.retryReplaced(func(l *shardlog.Log) (err error) { off, err = l.OffsetForTime(ts); return err })
	case sh.local != nil:
		// A replicated shard's own log may hold records past what is
		// committed, which is the shard's end.
		off, err = sh.local.OffsetForTime(ts)
		off = min(off, sh.log.End())
	default:
		off, err = scanForTime(sh.log, ts)
	}
	return off, translateLogErr(err)
}

// Usage returns the shard's bytes and its oldest and newest record times.
// It reads the disk (the first records, segment metas): off a loop.
func (sh *Shard) Usage() (ShardUsage, error) {
	var u ShardUsage
	var err error
	usage := func(l *shardlog.Log) (err error) {
		u.Bytes = l.Stats().Bytes
		u.FirstTime, u.LastTime, err = l.Times()
		return err
	}
	switch d, ok := sh.log.(*diskLog); {
	case ok:
		err = d.retryReplaced(usage)
	case sh.local != nil:
		err = usage(sh.local) // a replicated shard's own log, uncommitted records included
	default:
		u, err = scanUsage(sh.log)
	}
	return u, translateLogErr(err)
}

// retryReplaced runs fn on the current log, once more on the next when the
// log was replaced under it (its files released: ErrClosed).
func (d *diskLog) retryReplaced(fn func(*shardlog.Log) error) error {
	l := d.current()
	err := fn(l)
	if errors.Is(err, shardlog.ErrClosed) && d.current() != l {
		err = fn(d.current())
	}
	return err
}

// scanForTime walks a log from its start: for the bounded memory log.
func scanForTime(l logStore, ts int64) (int64, error) {
	off := l.End()
	err := walk(l, func(r segment.Record) bool {
		if r.Timestamp >= ts {
			off = r.Offset
			return false
		}
		return true
	})
	return off, err
}

// scanUsage walks the bounded memory log for its bytes and times.
func scanUsage(l logStore) (ShardUsage, error) {
	var u ShardUsage
	err := walk(l, func(r segment.Record) bool {
		if u.FirstTime == 0 {
			u.FirstTime = r.Timestamp
		}
		u.LastTime = max(u.LastTime, r.Timestamp)
		u.Bytes += int64(r.Size())
		return true
	})
	return u, err
}

// walk hands each record of l that is not a control record to fn, from
// Start, until fn returns false or End.
func walk(l logStore, fn func(segment.Record) bool) error {
	var buf []byte
	for from := l.Start(); ; {
		out, next, err := l.Read(from, timeScanBytes, buf[:0])
		if errors.Is(err, shardlog.ErrBelowStart) {
			from = l.Start() // the oldest records were dropped while we read
			continue
		}
		if err != nil || next <= from {
			return err
		}
		it := segment.NewIter(out)
		for r, ok := it.Next(); ok; r, ok = it.Next() {
			if r.Flags&segment.FlagControl == 0 && !fn(r) {
				return nil
			}
		}
		from, buf = next, out
	}
}
