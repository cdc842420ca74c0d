package engine

import (
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/felixbroker/felix/engine/shardlog"
)

// The backoff between attempts to reopen a shard log that failed for lack
// of space: it doubles from the first to the last, so a disk that stays
// full costs one probe every reopenBackoffMax, and a shard serves again
// within about that long of space coming back.
const (
	reopenBackoffMin = 100 * time.Millisecond
	reopenBackoffMax = 10 * time.Second
)

// diskLog is a durable shard's log: a shardlog.Log the shard reopens from
// disk, on a goroutine of its own, once it failed for lack of space
// (shardlog.Log.Reopen: the poison rule lets nothing else clear it). It
// starts at the first append refused with ENOSPC and retries with backoff
// until a reopen succeeds or the shard stops; no caller ever waits for it
// (appends meanwhile are refused at once, with storage_full), and a failure
// with another cause (EIO) leaves the shard failed until a restart: the
// disk is suspect. Reads go on throughout, on the old log until the new
// one takes its place.
type diskLog struct {
	sh     *Shard
	logger *slog.Logger
	cur    atomic.Pointer[shardlog.Log]

	// reopenMu serializes a reopen with ApplyRetention and Close, which
	// must not run on a log while it is being replaced.
	reopenMu sync.Mutex

	// hmu guards healing and closed; never held across IO, so an append
	// on an event loop that starts the healing never waits on a disk.
	hmu     sync.Mutex
	healing bool // a goroutine is reopening the current log
	closed  bool
	stop    chan struct{} // closed by Close
	done    sync.WaitGroup
}

func newDiskLog(sh *Shard, l *shardlog.Log, logger *slog.Logger) *diskLog {
	d := &diskLog{sh: sh, logger: logger, stop: make(chan struct{})}
	d.cur.Store(l)
	return d
}

// current is the log the shard serves from now.
func (d *diskLog) current() *shardlog.Log { return d.cur.Load() }

func (d *diskLog) Append(entries []shardlog.Entry, gen uint32, w shardlog.Waiter) (int64, error) {
	l := d.cur.Load()
	first, err := l.Append(entries, gen, w)
	if err != nil {
		d.failed(l, err)
	}
	return first, err
}

// appendWithoutWake is shardlog.Log.AppendWithoutWake on the current log,
// which it returns for the caller to wake.
func (d *diskLog) appendWithoutWake(entries []shardlog.Entry, gen uint32, w shardlog.Waiter) (*shardlog.Log, error) {
	l := d.cur.Load()
	_, err := l.AppendWithoutWake(entries, gen, w)
	if err != nil {
		d.failed(l, err)
	}
	return l, err
}

// Read reads the current log; a read that lands on a log just replaced
// (its files released) goes again, on the new one.
func (d *diskLog) Read(from int64, maxBytes int, dst []byte) ([]byte, int64, error) {
	for {
		l := d.cur.Load()
		out, next, err := l.Read(from, maxBytes, dst)
		if errors.Is(err, shardlog.ErrClosed) && d.cur.Load() != l {
			continue
		}
		return out, next, err
	}
}

func (d *diskLog) Start() int64 { return d.cur.Load().Start() }
func (d *diskLog) End() int64   { return d.cur.Load().End() }

// ApplyRetention applies retention to the current log, never while it is
// being replaced.
func (d *diskLog) ApplyRetention() (int, int64) {
	d.reopenMu.Lock()
	defer d.reopenMu.Unlock()
	return d.cur.Load().ApplyRetention()
}

// Close stops the healing, waiting for a reopen in progress, and closes
// the current log.
func (d *diskLog) Close() error {
	d.hmu.Lock()
	if !d.closed {
		d.closed = true
		close(d.stop)
	}
	d.hmu.Unlock()
	d.done.Wait()
	d.reopenMu.Lock()
	defer d.reopenMu.Unlock()
	return d.cur.Load().Close()
}

// failed starts the healing when l, still the current log, refused an
// append because it failed for lack of space.
func (d *diskLog) failed(l *shardlog.Log, err error) {
	if !errors.Is(err, shardlog.ErrPoisoned) || !errors.Is(err, syscall.ENOSPC) {
		return
	}
	d.hmu.Lock()
	defer d.hmu.Unlock()
	if d.healing || d.closed || d.cur.Load() != l {
		return
	}
	d.healing = true
	d.done.Add(1)
	go d.heal()
}

// heal tries to reopen the log, waiting reopenBackoffMin, then twice as
// long each time, up to reopenBackoffMax, until it succeeds or the shard
// stops.
func (d *diskLog) heal() {
	defer d.done.Done()
	for delay := reopenBackoffMin; ; delay = min(2*delay, reopenBackoffMax) {
		t := time.NewTimer(delay)
		select {
		case <-d.stop:
			t.Stop()
			return
		case <-t.C:
		}
		if d.reopen() {
			return
		}
	}
}

// reopen replaces the failed log with the same directory opened again, and
// reports whether it did.
func (d *diskLog) reopen() bool {
	d.reopenMu.Lock()
	defer d.reopenMu.Unlock()
	old := d.cur.Load()
	n, err := old.Reopen()
	switch {
	case errors.Is(err, shardlog.ErrNoSpace):
		d.logger.Info("shard log still out of space; appends stay refused", "err", err)
		return false
	case err != nil:
		d.logger.Warn("could not reopen the failed shard log; will try again", "err", err)
		return false
	}
	d.sh.takeLog(d, old, n)
	if err := old.Close(); err != nil {
		d.logger.Warn("closing the failed shard log", "err", err)
	}
	d.logger.Info("shard log reopened after running out of space; appends accepted again",
		"start", n.Start(), "end", n.End())
	return true
}

// swap makes n the current log and lets a failure of it start a new
// healing. Called with the shard's subMu held, so that no subscription
// goes live between the two logs.
func (d *diskLog) swap(n *shardlog.Log) {
	d.hmu.Lock()
	d.cur.Store(n)
	d.healing = false
	d.hmu.Unlock()
}

// replayBytesMax bounds one read of the records a reopened log recovered
// past the old one's end; there are at most the two write buffers' worth.
const replayBytesMax = 1 << 20

// takeLog puts n in place of old. The records n recovered past old's end
// (appends whose publishers were told their fate was unknown: their bytes
// had reached the file) are handed to the live subscriptions first, as if n
// had just made them visible, so a live subscriber sees no gap.
func (sh *Shard) takeLog(d *diskLog, old, n *shardlog.Log) {
	from, to := old.End(), n.End()
	var recovered []byte
	switch {
	case to < from:
		// Only a failed fdatasync can drop what a log acknowledged from
		// the page cache (None, Periodic); say so, it cannot be undone.
		d.logger.Error("the reopened shard log ends before what was acknowledged", "acknowledged_end", from, "end", to)
	case to > from:
		recovered = readRange(n, from, to, d.logger)
	}
	sh.subMu.Lock()
	defer sh.subMu.Unlock()
	d.swap(n)
	if len(recovered) > 0 {
		sh.visibleLocked(recovered)
	}
}

// readRange reads the framed records of [from, to) from l; on a read error
// it logs and returns what it has.
func readRange(l *shardlog.Log, from, to int64, logger *slog.Logger) []byte {
	var out []byte
	for from < to {
		var next int64
		var err error
		out, next, err = l.Read(from, replayBytesMax, out)
		if err != nil || next <= from {
			logger.Warn("reading the records a reopened shard log recovered", "from", from, "err", err)
			return out
		}
		from = next
	}
	return out
}
