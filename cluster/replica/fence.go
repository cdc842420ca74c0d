package replica

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
	"github.com/zeebo/xxh3"
)

// The fence file: one per replica of a log, what the replica has promised
// and must keep promising after a crash. It is replaced whole (written to
// a temporary file, synced, renamed over the old one, the directory
// synced: vfs.WriteFileAtomic), so a crash leaves the old content or the
// new, and any damage to it is corruption, never a torn write to skip.
//
// Format (version 1, frozen), 48 bytes, little endian:
//
//	 0 magic "FXFN" | 4 version u32 (1) | 8 fence generation u64 |
//	16 synchronised generation u64 | 24 control-plane epoch i64 |
//	32 reserved u64 (0) | 40 checksum u64: xxh3 of bytes 0..40
//
// A missing file is the zero state: the replica never promised anything.
const (
	// FenceFileName is the fence file's name in the directory the caller
	// gives; it is no segment's name, so a shard log's own directory
	// serves (the log's recovery removes a leftover FenceFileName+".tmp").
	FenceFileName   = "replica.fence"
	fenceFileBytes  = 48
	fenceMagic      = "FXFN"
	fenceVersion    = 1
	fenceSumCovered = 40
)

// FenceState is what a replica has promised, durably.
type FenceState struct {
	// Generation is F: the highest generation this replica was fenced at
	// or accepted a leader's REPLICATE at. It never falls; nothing of a
	// lower generation is appended or acknowledged.
	Generation uint64
	// Synced is A: the generation whose leader this replica has
	// synchronised its log with (truncated what that leader does not
	// hold). Appends are taken only when Synced == Generation.
	Synced uint64
	// Epoch is the highest control-plane epoch a fence carried.
	Epoch int64
}

// FenceStore keeps one replica's FenceState in its fence file. Update is
// durable before it returns; State is the last durable state. Safe for
// concurrent use.
type FenceStore struct {
	fs  vfs.FS
	dir string

	wmu sync.Mutex // serialises Update: read, change, write, publish
	mu  sync.Mutex // guards state; a leaf lock
	st  FenceState
}

// OpenFenceStore reads the fence file in dir (the zero state when there is
// none). A file that is not one valid version-1 fence refuses to open with
// a *segment.CorruptionError (errors.Is segment.ErrCorrupt): reading it as
// zero would let a replica take a leader it promised to refuse.
func OpenFenceStore(fs vfs.FS, dir string) (*FenceStore, error) {
	s := &FenceStore{fs: fs, dir: dir}
	b, err := vfs.ReadFile(fs, s.path())
	switch {
	case errors.Is(err, vfs.ErrNotExist):
		return s, nil
	case err != nil:
		return nil, fmt.Errorf("felix/replica: reading %s: %w", s.path(), err)
	}
	st, reason := decodeFence(b)
	if reason != "" {
		return nil, &segment.CorruptionError{File: s.path(), Reason: reason}
	}
	s.st = st
	return s, nil
}

func (s *FenceStore) path() string { return filepath.Join(s.dir, FenceFileName) }

// State is the last durable state.
func (s *FenceStore) State() FenceState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st
}

// Update applies change to a copy of the durable state and, when change
// returns nil and altered it, writes it durably before publishing it; it
// returns the state now durable. An error from change is returned as is
// and nothing is written. Updates run one at a time, each seeing the one
// before. change runs with the store's write lock held: it must not call
// the store.
func (s *FenceStore) Update(change func(*FenceState) error) (FenceState, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	st := s.State()
	next := st
	if err := change(&next); err != nil {
		return st, err
	}
	if next == st {
		return st, nil // already durable
	}
	b := encodeFence(next)
	if err := vfs.WriteFileAtomic(s.fs, s.dir, FenceFileName, b[:]); err != nil {
		return st, fmt.Errorf("felix/replica: persisting the fence in %s: %w", s.dir, err)
	}
	s.mu.Lock()
	s.st = next
	s.mu.Unlock()
	return next, nil
}

func encodeFence(st FenceState) [fenceFileBytes]byte {
	var b [fenceFileBytes]byte
	copy(b[0:], fenceMagic)
	binary.LittleEndian.PutUint32(b[4:], fenceVersion)
	binary.LittleEndian.PutUint64(b[8:], st.Generation)
	binary.LittleEndian.PutUint64(b[16:], st.Synced)
	binary.LittleEndian.PutUint64(b[24:], uint64(st.Epoch))
	binary.LittleEndian.PutUint64(b[40:], xxh3.Hash(b[:fenceSumCovered]))
	return b
}

// decodeFence returns the state b holds, or why it holds none.
func decodeFence(b []byte) (FenceState, string) {
	switch {
	case len(b) != fenceFileBytes:
		return FenceState{}, fmt.Sprintf("fence file of %d bytes, want %d", len(b), fenceFileBytes)
	case binary.LittleEndian.Uint64(b[40:]) != xxh3.Hash(b[:fenceSumCovered]):
		return FenceState{}, "fence file checksum mismatch"
	case string(b[0:4]) != fenceMagic:
		return FenceState{}, "not a fence file (bad magic)"
	case binary.LittleEndian.Uint32(b[4:]) != fenceVersion:
		return FenceState{}, fmt.Sprintf("fence file version %d, want %d", binary.LittleEndian.Uint32(b[4:]), fenceVersion)
	}
	st := FenceState{
		Generation: binary.LittleEndian.Uint64(b[8:]),
		Synced:     binary.LittleEndian.Uint64(b[16:]),
		Epoch:      int64(binary.LittleEndian.Uint64(b[24:])),
	}
	if st.Synced > st.Generation {
		return FenceState{}, fmt.Sprintf("fence file synchronised at generation %d, above its fence %d", st.Synced, st.Generation)
	}
	return st, ""
}
