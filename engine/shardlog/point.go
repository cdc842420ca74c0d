package shardlog

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
	"github.com/zeebo/xxh3"
)

// The recovery point: a small file beside the segments that records a
// position up to which everything is known durable: in the active segment,
// or in the oldest retired segment still waiting for its seal. Recovery
// refuses damage before it (corruption) and cuts damage after it (the page
// cache writes pages in any order, so an unsynced region can hold holes).
// It is updated after syncs of the active segment (at most once a second),
// after each seal, and at Close.
//
// Format (version 1, frozen): two 32-byte slots, written alternately, each
//
//	 0 sequence (u64) | 8 segment base (i64) | 16 byte position (i64) |
//	24 checksum (u64): xxh3 of bytes 0..24
//
// The valid slot with the higher sequence wins; a torn slot write leaves
// the other one standing.
const (
	pointName     = "recovery.point"
	pointSlotSize = 32
)

// point is a position in a segment.
type point struct {
	base, pos int64
}

type pointFile struct {
	mu   sync.Mutex // writes: the background loop, a seal, Truncate, Close
	f    vfs.File
	seq  uint64
	last point
	buf  [pointSlotSize]byte // the slot being written: on the heap with the Log, so a write through vfs.File allocates nothing
}

// openPoint reads the recovery point, creating the file when it is missing.
// ok is false when there was no valid point.
func (l *Log) openPoint() (p point, ok bool, err error) {
	path := filepath.Join(l.opts.Dir, pointName)
	f, err := l.opts.FS.OpenReadWrite(path)
	if err != nil {
		if f, err = l.opts.FS.Create(path); err != nil {
			return point{}, false, fmt.Errorf("felix/shardlog: creating %s: %w", path, err)
		}
		if err := l.opts.FS.SyncDir(l.opts.Dir); err != nil {
			f.Close()
			return point{}, false, fmt.Errorf("felix/shardlog: syncing %s: %w", l.opts.Dir, err)
		}
	}
	l.point.f = f
	buf := make([]byte, 2*pointSlotSize)
	n, _ := f.ReadAt(buf, 0)
	for slot := 0; slot+pointSlotSize <= n; slot += pointSlotSize {
		seq, pt, valid := decodePoint(buf[slot : slot+pointSlotSize])
		if valid && (!ok || seq > l.point.seq) {
			l.point.seq, p, ok = seq, pt, true
		}
	}
	l.point.last = p
	return p, ok, nil
}

func decodePoint(b []byte) (seq uint64, p point, ok bool) {
	if binary.LittleEndian.Uint64(b[24:]) != xxh3.Hash(b[:24]) {
		return 0, point{}, false
	}
	seq = binary.LittleEndian.Uint64(b[0:])
	p = point{base: int64(binary.LittleEndian.Uint64(b[8:])), pos: int64(binary.LittleEndian.Uint64(b[16:]))}
	return seq, p, seq > 0
}

// writePoint records p as durable, in the slot the last write did not use.
func (l *Log) writePoint(p point) error {
	pf := &l.point
	pf.mu.Lock()
	defer pf.mu.Unlock()
	if pf.f == nil || p == pf.last {
		return nil
	}
	seq := pf.seq + 1
	b := &pf.buf
	binary.LittleEndian.PutUint64(b[0:], seq)
	binary.LittleEndian.PutUint64(b[8:], uint64(p.base))
	binary.LittleEndian.PutUint64(b[16:], uint64(p.pos))
	binary.LittleEndian.PutUint64(b[24:], xxh3.Hash(b[:24]))
	if _, err := pf.f.WriteAtSync(b[:], int64(seq%2)*pointSlotSize); err != nil {
		return fmt.Errorf("felix/shardlog: writing the recovery point: %w", err)
	}
	pf.seq, pf.last = seq, p
	return nil
}

// tornAfter turns the recovery point into the scan's TornAfter for the
// active segment at base: a point in an earlier segment (or none) means
// nothing in this one is known durable.
func tornAfter(p point, ok bool, base int64) int64 {
	if !ok || p.base != base || p.pos < segment.HeaderSize {
		return segment.HeaderSize
	}
	return p.pos
}

// checkpoint writes the durable position when it moved. Called by the
// background loop, a seal and Close.
func (l *Log) checkpoint() {
	l.wmu.Lock()
	p := l.durablePoint
	l.wmu.Unlock()
	if err := l.writePoint(p); err != nil {
		l.opts.Logger.Warn("could not update the recovery point", "dir", l.opts.Dir, "err", err)
	}
}
