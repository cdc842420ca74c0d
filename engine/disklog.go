package engine

import (
	"log/slog"

	"github.com/felixbroker/felix/engine/shardlog"
)

// The backoff between attempts to reopen a shard log that failed for lack
// of space (shardlog.Healer's): it doubles from the first to the last, so a
// disk that stays full costs one probe every reopenBackoffMax, and a shard
// serves again within about that long of space coming back.
const (
	reopenBackoffMin = shardlog.HealBackoffMin
	reopenBackoffMax = shardlog.HealBackoffMax
)

// diskLog is a durable shard's log: a shardlog.Log the shard reopens from
// disk, on a goroutine of its own, once it failed for lack of space
// (shardlog.Healer; shardlog.Log.Reopen: the poison rule lets nothing else
// clear it). It starts at the first append refused with ENOSPC and retries
// with backoff until a reopen succeeds or the shard stops; no caller ever
// waits for it (appends meanwhile are refused at once, with storage_full),
// and a failure with another cause (EIO) leaves the shard failed until a
// restart: the disk is suspect. Reads go on throughout, on the old log
// until the new one takes its place.
type diskLog struct {
	sh     *Shard
	logger *slog.Logger
	heal   *shardlog.Healer
}

func newDiskLog(sh *Shard, l *shardlog.Log, logger *slog.Logger) *diskLog {
	d := &diskLog{sh: sh, logger: logger}
	d.heal = shardlog.NewHealer(l, d.take, logger)
	return d
}

// current is the log the shard serves from now.
func (d *diskLog) current() *shardlog.Log { return d.heal.Log() }

func (d *diskLog) Append(entries []shardlog.Entry, gen uint32, w shardlog.Waiter) (int64, error) {
	l := d.heal.Log()
	first, err := l.Append(entries, gen, w)
	if err != nil {
		d.heal.Failed(l, err)
	}
	return first, err
}

// appendWithoutWake is shardlog.Log.AppendWithoutWake on the current log,
// which it returns for the caller to wake.
func (d *diskLog) appendWithoutWake(entries []shardlog.Entry, gen uint32, w shardlog.Waiter) (*shardlog.Log, error) {
	l := d.heal.Log()
	_, err := l.AppendWithoutWake(entries, gen, w)
	if err != nil {
		d.heal.Failed(l, err)
	}
	return l, err
}

// Read reads the current log; a read that lands on a log just replaced
// (its files released) goes again, on the new one.
func (d *diskLog) Read(from int64, maxBytes int, dst []byte) ([]byte, int64, error) {
	return d.heal.Read(from, maxBytes, dst)
}

func (d *diskLog) Start() int64 { return d.heal.Log().Start() }
func (d *diskLog) End() int64   { return d.heal.Log().End() }

// ApplyRetention applies retention to the current log, never while it is
// being replaced.
func (d *diskLog) ApplyRetention() (int, int64) {
	d.heal.Lock()
	defer d.heal.Unlock()
	return d.heal.Log().ApplyRetention()
}

// Close stops the healing, waiting for a reopen in progress, and closes
// the current log.
func (d *diskLog) Close() error { return d.heal.Close() }

// take puts n in place of old (the Healer's TakeFunc). The records n
// recovered past old's end (appends whose publishers were told their fate
// was unknown: their bytes had reached the file) are handed to the live
// subscriptions first, as if n had just made them visible, so a live
// subscriber sees no gap.
func (d *diskLog) take(old, n *shardlog.Log) error {
	recovered, err := shardlog.Recovered(old, n)
	if err != nil {
		d.logger.Warn("reading the records a reopened shard log recovered", "from", old.End(), "err", err)
	}
	sh := d.sh
	sh.subMu.Lock()
	defer sh.subMu.Unlock()
	d.heal.Swap(n) // under subMu: no subscription goes live between the two logs
	if len(recovered) > 0 {
		sh.visibleLocked(recovered)
	}
	return nil
}
