package shardlog

import "github.com/felixbroker/felix/segment"

// Deferred sealing, under None and Periodic. A rollover hands the retired
// segment to the retiring list instead of syncing it on the committer; the
// background loop (or whoever needs everything durable: Sync, Close,
// Truncate, a compaction) seals the list oldest first. While a segment is
// on the list:
//
//   - the durable watermark and the recovery point stay at or before its
//     end: sealing it moves them to the next segment's header, and a sync
//     of the active segment moves them only once the list is empty;
//   - recovery treats it like the active segment (it may hold holes the
//     page cache never wrote back), and when a crash left it short of the
//     next segment's base it cuts it there and removes every later segment
//     (settle.go), so the log stays a gapless prefix;
//   - retention and compaction leave it alone (they take sealed segments).
//
// retiringMax bounds the list: a rollover that would make it longer seals
// the oldest first, so a disk that cannot keep up slows the committer down
// to its pace instead of leaving ever more of the log unsynced.
const retiringMax = 4

// sealsLater says whether rollover leaves the retired segment's seal to the
// background loop: under None and Periodic, where no acknowledgement waits
// for an fdatasync.
func (l *Log) sealsLater() bool { return l.opts.Fsync.Kind != FsyncOnCommit }

// sealRetired seals retiring segments, oldest first, until at most keep are
// left, moving the durable watermark and the recovery point past each.
func (l *Log) sealRetired(keep int) error {
	if l.retiringCount() <= keep {
		return nil // no waiting behind a seal the list does not need
	}
	l.sealMu.Lock()
	defer l.sealMu.Unlock()
	for {
		l.wmu.Lock()
		if len(l.retiring) <= keep {
			l.wmu.Unlock()
			return nil
		}
		s := l.retiring[0]
		l.wmu.Unlock()
		if err := l.seal(s); err != nil {
			return err
		}
		l.wmu.Lock()
		l.retiring = append(l.retiring[:0], l.retiring[1:]...)
		if s.fillNext > l.durable.Load() {
			l.durable.Store(s.fillNext)
			l.durablePoint = point{base: s.fillNext, pos: segment.HeaderSize}
		}
		l.wmu.Unlock()
		l.checkpoint()
	}
}

func (l *Log) retiringCount() int {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	return len(l.retiring)
}
