package vfs

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
)

// CrashMode says what a simulated crash keeps besides the durable state.
// Make one with DropUnsynced, TearLastWrite or WriteBackSome.
type CrashMode int

// DropUnsynced keeps only durable bytes and durable directory entries.
const DropUnsynced CrashMode = 0

// TearLastWrite is DropUnsynced, except that the first k bytes (clamped to
// its length) of the most recent WriteAt not yet synced also survive, on
// top of that file's durable bytes; the file grows when they reach past
// its durable size, zero-filled up to the write's offset. When that file
// has no durable directory entry it is gone, torn or not. TearLastWrite(0)
// is DropUnsynced.
func TearLastWrite(k int) CrashMode { return CrashMode(max(k, 0)) }

// WriteBackSome is the page cache's crash: of every file's unsynced state,
// some sectors (512 bytes) were written back and the rest were not, in no
// order, chosen by seed (the same seed, the same choice). Each sector that
// differs from the durable bytes keeps its new bytes or its durable ones
// (zeros past the durable size), and each file keeps its new size or its
// durable one. Directory entries are as DropUnsynced leaves them.
func WriteBackSome(seed int) CrashMode { return CrashMode(-1 - max(seed, 0)) }

func (c CrashMode) String() string {
	switch {
	case c == DropUnsynced:
		return "drop-unsynced"
	case c < 0:
		return fmt.Sprintf("write-back-some(%d)", c.seed())
	}
	return fmt.Sprintf("tear-last-write(%d)", int(c))
}

// seed is a WriteBackSome mode's seed.
func (c CrashMode) seed() int { return int(-1 - c) }

// SetCrashAfter arms a crash: when the n-th mutating call from now
// completes (see doc.go for which calls count, and how), the FS captures
// the image that crash leaves, and from then on every call on the FS or
// its open files fails with ErrCrashed. The n-th call itself succeeds.
// n <= 0 disarms a crash not yet happened. A crashed FS stays crashed.
func (m *MemFS) SetCrashAfter(n int, mode CrashMode) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if n <= 0 {
		m.crashAt = 0
		return
	}
	m.crashAt, m.crashMode = m.mutations+n, mode
}

// Crash crashes the FS now, as SetCrashAfter would, and returns the image
// the crash left, as CrashImage does. On an FS that already crashed it
// changes nothing and returns the image of that crash.
func (m *MemFS) Crash(mode CrashMode) *MemFS {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.image == nil {
		m.image = m.capture(mode)
	}
	return m.image.clone()
}

// Crashed reports whether the FS has crashed.
func (m *MemFS) Crashed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.image != nil
}

// CrashImage returns what the crash left, as a fresh MemFS with no open
// files in which every byte and entry is durable; each call returns a new
// copy. It returns nil while the FS has not crashed.
func (m *MemFS) CrashImage() *MemFS {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.image == nil {
		return nil
	}
	return m.image.clone()
}

// MutationCount returns how many mutating calls have succeeded so far.
func (m *MemFS) MutationCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mutations
}

// LastWriteLen returns the length of the write TearLastWrite would tear
// now: the most recent WriteAt whose file has not been synced since. It is
// 0 when every file is synced.
func (m *MemFS) LastWriteLen() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if n := m.lastWritten(); n != nil {
		return len(n.last.data)
	}
	return 0
}

// lastWritten returns the file holding the most recent unsynced write, or
// nil. The caller holds m.mu.
func (m *MemFS) lastWritten() *memNode {
	var latest *memNode
	for n := range m.unsynced {
		if latest == nil || n.last.seq > latest.last.seq {
			latest = n
		}
	}
	return latest
}

// clone returns a copy of an image: the durable state of a MemFS whose
// state is all durable. The caller holds m.mu or owns m.
func (m *MemFS) clone() *MemFS { return m.capture(DropUnsynced) }

// capture builds the image a crash in mode leaves now: the durable tree
// from the root, each file with its durable bytes, and the tear. The
// caller holds m.mu.
func (m *MemFS) capture(mode CrashMode) *MemFS {
	b := imageBuilder{built: map[*memNode]*memNode{}}
	switch {
	case mode < 0:
		b.scatter = rand.New(rand.NewPCG(uint64(mode.seed()), 0x5ec7))
	case mode != DropUnsynced:
		b.torn, b.keep = m.lastWritten(), int(mode)
	}
	return &MemFS{root: b.node(m.root), unsynced: map[*memNode]struct{}{}}
}

// imageBuilder copies the durable tree. A node reached through several
// durable entries (a rename whose old directory was never synced) is
// copied once and linked from each.
type imageBuilder struct {
	built map[*memNode]*memNode
	torn  *memNode // the file whose last write is torn, or nil
	keep  int      // bytes of that write to keep
	// scatter, in WriteBackSome mode, picks the sectors written back.
	scatter *rand.Rand
}

func (b *imageBuilder) node(src *memNode) *memNode {
	if n, ok := b.built[src]; ok {
		return n
	}
	if !src.dir {
		n := &memNode{data: b.fileBytes(src)}
		n.durable = append([]byte(nil), n.data...)
		b.built[src] = n
		return n
	}
	n := newMemDir()
	b.built[src] = n // before the children: durable trees can loop
	for name, c := range src.durableChildren {
		n.children[name] = b.node(c)
	}
	n.durableChildren = maps.Clone(n.children)
	return n
}

// fileBytes returns what survives of a file: its durable bytes, and the
// kept prefix of its last write when it is the torn file.
func (b *imageBuilder) fileBytes(src *memNode) []byte {
	if b.scatter != nil {
		return b.writtenBack(src)
	}
	data := append([]byte(nil), src.durable...)
	if src != b.torn || b.keep == 0 {
		return data
	}
	w := src.last
	kept := w.data[:min(b.keep, len(w.data))]
	if end := w.off + int64(len(kept)); end > int64(len(data)) {
		data = append(data, make([]byte, end-int64(len(data)))...)
	}
	copy(data[w.off:], kept)
	return data
}

// sectorSize is the unit WriteBackSome writes back or loses.
const sectorSize = 512

// writtenBack returns what survives of a file in WriteBackSome mode: its
// new size or its durable one, and sector by sector where the two differ,
// the new bytes or the durable ones (zeros past the durable size).
func (b *imageBuilder) writtenBack(src *memNode) []byte {
	size := len(src.durable)
	if b.scatter.IntN(2) == 0 {
		size = len(src.data)
	}
	out := make([]byte, size)
	copy(out, src.durable)
	for at := 0; at < min(size, len(src.data)); at += sectorSize {
		end := min(at+sectorSize, size, len(src.data))
		if bytes.Equal(out[at:end], src.data[at:end]) {
			continue
		}
		if b.scatter.IntN(2) == 0 {
			copy(out[at:end], src.data[at:end])
		}
	}
	return out
}
