package shardlog

import (
	"errors"
	"sync/atomic"

	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

// Background verification. Open takes the sealed segments before the
// recovery point's on their index, checking only what is cheap (recover.go:
// sealedByIndex); their records were synced before the point moved past
// them, so nothing in them is an unfinished write, and a restart costs the
// unsynced tail, not the whole log. Each is then verified in full here, on
// one goroutine per log, through the same FS, paced (Options.VerifyPacer)
// and stopped by Close: every record's checksums, the offsets and
// generations, the index entries, and that the segment ends where its index
// says. Damage takes the log offline (offline.go). Until a segment is
// verified its reads still check every record they return, so a damaged
// record is never served, only found sooner or later.
//
// Newest first: a crash's damage is likelier in what was written last, and
// a catching-up reader likelier to need it; the oldest may go to retention
// before anyone reads it.
type verifier struct {
	queue []*seg // the segments to verify, oldest first; written by Open only
	stop  chan struct{}
	done  chan struct{}

	pending  atomic.Int64 // segments queued and not verified yet
	verified atomic.Int64 // segments verified in full
	bytes    atomic.Int64 // bytes of the segments verified
	failures atomic.Int64 // verifications an IO error cut short
}

// Verified returns a channel closed once the background verification of
// the sealed segments is over: every one verified, damage found, or the
// log closed.
func (l *Log) Verified() <-chan struct{} { return l.verify.done }

// verifyLoop verifies the queue, newest first, until done, damage or Close.
func (l *Log) verifyLoop() {
	defer close(l.verify.done)
	q := l.verify.queue
	l.verify.queue = nil
	for i := len(q) - 1; i >= 0 && l.offline.err.Load() == nil; i-- {
		err := l.verifyOne(q[i])
		l.verify.pending.Add(-1)
		if errors.Is(err, errStopped) {
			return
		}
	}
}

// verifyOne verifies s in full, unless retention, compaction or Truncate
// took it from the log first.
func (l *Log) verifyOne(s *seg) error {
	snap, ok := l.snapshotSealed(s)
	if !ok {
		return nil
	}
	defer s.release(l.opts.FS)
	if size, err := l.opts.FS.Stat(indexPath(s)); err == nil {
		if err := l.opts.VerifyPacer.wait(int(size), l.verify.stop); err != nil {
			return err // the index is read whole, before the pacer would see it
		}
	}
	entries, indexed := l.indexToCheck(s)
	sum, err := l.scanToVerify(s, snap, entries, indexed)
	if err == nil && !indexed {
		l.restoreIndex(s, snap, &sum)
	}
	return l.verdict(s, snap, err)
}

// scanToVerify reads s through the pacer, verifying every record and,
// when s has an index that stands (indexed), every entry of it; and that
// the records run to where s ends.
func (l *Log) scanToVerify(s *seg, snap sealedSnapshot, entries []segment.IndexEntry, indexed bool) (segment.Summary, error) {
	check := indexCheck{entries: entries, base: s.base, path: indexPath(s)}
	opts := segment.ScanOptions{Name: s.path, Sealed: true, IndexIntervalBytes: l.opts.IndexIntervalBytes}
	if indexed {
		opts.Visit = check.visit
	}
	r := pacedReader{r: snap.file, pacer: l.opts.VerifyPacer, stop: l.verify.stop}
	sum, err := segment.Scan(r, snap.end, opts)
	switch {
	case err != nil:
		return sum, err
	case indexed:
		return sum, check.finish(s, &sum, snap)
	}
	return sum, runsToEnd(s, &sum, snap.end, snap.next)
}

// sealedSnapshot is what a sealed segment claims, read under wmu: Truncate
// swaps the file and the fill fields of a segment it reopens.
type sealedSnapshot struct {
	file      vfs.File
	end, next int64
}

// snapshotSealed takes a reference on s and what it claims, when it is
// still a sealed segment of the log.
func (l *Log) snapshotSealed(s *seg) (sealedSnapshot, bool) {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if !s.sealed.Load() || !l.holds(s) || !s.acquire() {
		return sealedSnapshot{}, false
	}
	return sealedSnapshot{file: s.file, end: s.fillPos, next: s.fillNext}, true
}

// verdict acts on a verification's outcome. Damage takes the log offline
// when s still is what was verified; an IO error is logged and counted (a
// read there fails the same way, serving nothing wrong).
func (l *Log) verdict(s *seg, snap sealedSnapshot, err error) error {
	var ce *segment.CorruptionError
	switch {
	case err == nil:
		l.verify.verified.Add(1)
		l.verify.bytes.Add(snap.end)
	case errors.Is(err, errStopped):
	case errors.As(err, &ce):
		if l.stillSealed(s, snap.file) {
			l.goOffline(ce)
		}
	default:
		l.verify.failures.Add(1)
		l.opts.Logger.Error("could not verify a sealed segment; its reads will fail the same way", "file", s.path, "err", err)
	}
	return err
}

func (l *Log) stillSealed(s *seg, f vfs.File) bool {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	return s.sealed.Load() && l.holds(s) && s.file == f
}

// holds reports whether s is in the segment list. Retention, compaction and
// Truncate take segments from the list under compaction.mu and wmu, one of
// which the caller holds for the answer to stay true.
func (l *Log) holds(s *seg) bool {
	return (*l.segs.Load()).find(s.base) == s
}
