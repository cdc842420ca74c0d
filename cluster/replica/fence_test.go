package replica

import (
	"encoding/binary"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/netio/wire"
	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
	"github.com/zeebo/xxh3"
)

func mustFenceStore(t *testing.T, fs vfs.FS) *FenceStore {
	t.Helper()
	s, err := OpenFenceStore(fs, folDir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func set(st FenceState) func(*FenceState) error {
	return func(s *FenceState) error { *s = st; return nil }
}

func TestFenceStoreRoundTrips(t *testing.T) {
	fs := vfs.NewMem()
	if err := fs.MkdirAll(folDir); err != nil {
		t.Fatal(err)
	}
	s := mustFenceStore(t, fs)
	if s.State() != (FenceState{}) {
		t.Fatalf("a missing fence file reads %+v, want zero", s.State())
	}
	st := FenceState{Generation: 7, Synced: 6, Epoch: 42}
	if _, err := s.Update(set(st)); err != nil {
		t.Fatal(err)
	}
	if got := mustFenceStore(t, fs).State(); got != st {
		t.Fatalf("reopened: %+v, want %+v", got, st)
	}
	muts := fs.MutationCount()
	if _, err := s.Update(set(st)); err != nil || fs.MutationCount() != muts {
		t.Fatalf("an unchanged state was written again (%v)", err)
	}
	refusal := errors.New("no")
	if got, err := s.Update(func(s *FenceState) error { s.Generation = 9; return refusal }); err != refusal || got != st || s.State() != st {
		t.Fatalf("a refused change: %+v, %v", got, err)
	}
}

// A crash after each mutation of an update leaves the old state until the
// directory sync that makes the rename durable, and the new one after it:
// never a mix, never an error on reopening.
func TestFenceStoreSurvivesACrashAtEveryStep(t *testing.T) {
	old, next := FenceState{Generation: 3, Synced: 3, Epoch: 5}, FenceState{Generation: 4, Synced: 3, Epoch: 6}
	for _, mode := range []vfs.CrashMode{vfs.DropUnsynced, vfs.TearLastWrite(20), vfs.WriteBackSome(1), vfs.WriteBackSome(2)} {
		for n := 1; ; n++ {
			fs := vfs.NewMem()
			if err := fs.MkdirAll(folDir); err != nil {
				t.Fatal(err)
			}
			s := mustFenceStore(t, fs)
			if _, err := s.Update(set(old)); err != nil {
				t.Fatal(err)
			}
			fs.SetCrashAfter(n, mode)
			_, err := s.Update(set(next))
			img := fs.CrashImage()
			if img == nil {
				if n == 1 {
					t.Fatal("an update made no mutation")
				}
				break // the update finished before the n-th mutation
			}
			got, oerr := OpenFenceStore(img, folDir)
			if oerr != nil {
				t.Fatalf("%v, crash after mutation %d: reopening: %v", mode, n, oerr)
			}
			switch st := got.State(); {
			case err == nil && st != next:
				t.Fatalf("%v, crash after mutation %d: the update returned but the image holds %+v", mode, n, st)
			case st != old && st != next:
				t.Fatalf("%v, crash after mutation %d: the image holds %+v, neither old nor new", mode, n, st)
			}
		}
	}
}

func TestFenceStoreRefusesADamagedFile(t *testing.T) {
	good := encodeFence(FenceState{Generation: 3, Synced: 2, Epoch: 1})
	for name, b := range map[string][]byte{
		"empty":          {},
		"short":          good[:40],
		"long":           append(good[:], 0),
		"flipped":        func() []byte { b := good; b[9] ^= 1; return b[:] }(),
		"bad magic":      resum(func(b []byte) { b[0] = 'X' }),
		"version 2":      resum(func(b []byte) { b[4] = 2 }),
		"synced above F": resum(func(b []byte) { b[16] = 9 }),
	} {
		fs := vfs.NewMem()
		if err := vfs.WriteFileAtomic(fs, "/", FenceFileName, b); err != nil {
			t.Fatal(err)
		}
		if _, err := OpenFenceStore(fs, "/"); !errors.Is(err, segment.ErrCorrupt) {
			t.Errorf("%s: %v, want a corruption error", name, err)
		}
	}
}

// resum changes a good fence file and fixes its checksum.
func resum(change func([]byte)) []byte {
	b := encodeFence(FenceState{Generation: 3, Synced: 2, Epoch: 1})
	change(b[:])
	binary.LittleEndian.PutUint64(b[fenceSumCovered:], xxh3.Hash(b[:fenceSumCovered]))
	return b[:]
}

func TestFenceIsDurableBeforeItIsAnswered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newFolRig(t, shardlog.OnCommit(), []uint32{1, 1})
		if _, err := r.f.Fence(3, 7); err != nil {
			t.Fatal(err)
		}
		img := r.fs.Crash(vfs.DropUnsynced)
		s, err := OpenFenceStore(img, folDir)
		if err != nil || s.State() != (FenceState{Generation: 3, Epoch: 7}) {
			t.Fatalf("a crash right after FenceOK left %+v (%v), want generation 3 epoch 7", s.State(), err)
		}
	})
}

func TestFenceRefusesAGenerationOrEpochBelowWhatItPromised(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newFolRig(t, shardlog.OnCommit(), nil)
		if _, err := r.f.Fence(5, 10); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			gen   uint64
			epoch int64
		}{{4, 11}, {6, 9}, {5, 9}} {
			if _, err := r.f.Fence(c.gen, c.epoch); !errors.Is(err, ErrStaleFence) {
				t.Errorf("fence at %d epoch %d after 5 epoch 10: %v, want ErrStaleFence", c.gen, c.epoch, err)
			}
		}
		for _, gen := range []uint64{0, 1 << 32} {
			if _, err := r.f.Fence(gen, 11); !errors.Is(err, ErrMalformed) {
				t.Errorf("fence at %d: %v, want ErrMalformed", gen, err)
			}
		}
		muts := r.fs.MutationCount()
		if ok, err := r.f.Fence(5, 10); err != nil || ok.Generation != 5 || r.fs.MutationCount() != muts {
			t.Fatalf("the same fence again: %+v, %v (%d mutations), want it answered again without a write", ok, err, r.fs.MutationCount()-muts)
		}
		if _, err := r.f.Fence(6, 0); err != nil { // a broker fencing itself to lead
			t.Fatal(err)
		}
		if st := r.f.fences.State(); st.Generation != 6 || st.Epoch != 10 {
			t.Fatalf("after a local fence at 6: %+v, want generation 6, epoch still 10", st)
		}
	})
}

func TestFenceAnswersTheReplicasRealState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newFolRig(t, shardlog.None(), []uint32{1, 1, 2})
		r.openFollower(true)
		ok, err := r.f.Fence(3, 1)
		if err != nil {
			t.Fatal(err)
		}
		want := wire.FenceOK{Generation: 3, Epoch: 1, LogEnd: 3, LastGen: 2, Durable: r.log.Durable(),
			Flags: wire.FenceNewDisk | wire.FenceClean}
		if ok.Generation != want.Generation || ok.Epoch != want.Epoch || ok.LogEnd != want.LogEnd || ok.LastGen != want.LastGen ||
			ok.Durable != want.Durable || ok.Flags != want.Flags || string(ok.DiskID) != "disk-f" {
			t.Fatalf("FenceOK %+v, want %+v disk-f", ok, want)
		}
		if ok.Durable > ok.LogEnd {
			t.Fatalf("durable %d past the log end %d", ok.Durable, ok.LogEnd)
		}
	})
}

// A log whose recovery cut a torn tail is not clean: its fence answer says
// so, with the log end that survived.
func TestFenceSaysWhenRecoveryCutATornTail(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newFolRig(t, shardlog.None(), []uint32{1, 1, 1})
		r.fs = r.fs.Crash(vfs.TearLastWrite(10))
		r.openLog()
		if r.log.Recovery().TornBytes == 0 {
			t.Skip("the crash left no torn tail to cut")
		}
		r.openFollower(false)
		ok, err := r.f.Fence(2, 1)
		if err != nil {
			t.Fatal(err)
		}
		if ok.Flags&wire.FenceClean != 0 || ok.LogEnd != r.log.End() {
			t.Fatalf("FenceOK %+v after a recovery that cut %d bytes, want not clean, at the log's end %d", ok, r.log.Recovery().TornBytes, r.log.End())
		}
	})
}
