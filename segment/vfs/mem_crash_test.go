package vfs

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

// TestMemTearAtEveryByte tears a write that overwrites the end of the
// durable bytes and extends past them, at every byte, and beyond.
func TestMemTearAtEveryByte(t *testing.T) {
	const durable, write, off = "0123456789", "abcdefgh", 6
	for k := 0; k <= len(write)+2; k++ {
		m := NewMem()
		f := durableFile(t, m, durable)
		writeAt(t, f, []byte("lost"), 0) // an earlier unsynced write: dropped
		writeAt(t, f, []byte(write), off)
		if got := m.LastWriteLen(); got != len(write) {
			t.Fatalf("LastWriteLen = %d, want %d", got, len(write))
		}
		want := []byte(durable)
		kept := write[:min(k, len(write))]
		want = append(want[:off], kept...)
		if len(want) < len(durable) {
			want = append(want, durable[len(want):]...)
		}
		image := m.Crash(TearLastWrite(k))
		if got := readFile(t, image, "/d/f"); !bytes.Equal(got, want) {
			t.Fatalf("k=%d: image holds %q, want %q", k, got, want)
		}
	}
}

func TestMemTearPastTheEndZeroFills(t *testing.T) {
	m := NewMem()
	f := durableFile(t, m, "ab")
	writeAt(t, f, []byte("xyz"), 5)
	image := m.Crash(TearLastWrite(2))
	if got := readFile(t, image, "/d/f"); string(got) != "ab\x00\x00\x00xy" {
		t.Fatalf("image holds %q", got)
	}
}

func TestMemTearPicksTheMostRecentUnsyncedWrite(t *testing.T) {
	m := NewMem()
	must(t, m.MkdirAll("/d"))
	a, b := create(t, m, "/d/a"), create(t, m, "/d/b")
	must(t, m.SyncDir("/d"))
	writeAt(t, a, []byte("AAAA"), 0)
	writeAt(t, b, []byte("BB"), 0)
	if got := m.LastWriteLen(); got != 2 {
		t.Fatalf("LastWriteLen = %d, want 2 (b's write)", got)
	}
	must(t, b.Sync()) // now a's write is the most recent unsynced one
	if got := m.LastWriteLen(); got != 4 {
		t.Fatalf("LastWriteLen after syncing b = %d, want 4", got)
	}
	checkTree(t, m.Crash(TearLastWrite(3)), map[string]string{"/d/": "", "/d/a": "AAA", "/d/b": "BB"})
	must(t, NewMem().SyncDir("/"))
	if got := NewMem().LastWriteLen(); got != 0 {
		t.Fatalf("LastWriteLen of an empty FS = %d", got)
	}
}

func TestMemTearOfAFileWithoutDurableEntryLeavesNothing(t *testing.T) {
	m := NewMem()
	must(t, m.MkdirAll("/d"))
	f := create(t, m, "/d/f")
	writeAt(t, f, []byte("abc"), 0)
	checkTree(t, m.Crash(TearLastWrite(3)), map[string]string{"/d/": ""})
}

// scriptStep is one call of the scripted workload, with what a crash right
// after it (and after each mutation it makes) leaves, per crash mode.
type scriptStep struct {
	name      string
	mutations int
	do        func(s *script) error
}

type script struct {
	m         *MemFS
	log, tmp  File
	completed int // steps that returned nil
}

func (s *script) run(steps []scriptStep) error {
	for _, step := range steps {
		if err := step.do(s); err != nil {
			return fmt.Errorf("%s: %w", step.name, err)
		}
		s.completed++
	}
	return nil
}

func write(f *File, p string, off int64) func(*script) error {
	return func(*script) error { _, err := (*f).WriteAt([]byte(p), off); return err }
}

// crashScript returns a workload and, for a crash after each mutation
// (index n-1), the image DropUnsynced and TearLastWrite(1) leave.
func crashScript(s *script) (steps []scriptStep, drop, tear1 []map[string]string) {
	dir := map[string]string{"/db/": ""}
	with := func(log string) map[string]string { return map[string]string{"/db/": "", "/db/log": log} }
	steps = []scriptStep{
		{"mkdir", 1, func(s *script) error { return s.m.MkdirAll("/db") }},
		{"create log", 1, func(s *script) (err error) { s.log, err = s.m.Create("/db/log"); return err }},
		{"write hello", 1, write(&s.log, "hello", 0)},
		{"syncdir", 1, func(s *script) error { return s.m.SyncDir("/db") }},
		{"sync log", 1, func(s *script) error { return s.log.Sync() }},
		{"writesync world", 2, func(s *script) error { _, err := s.log.WriteAtSync([]byte(" world"), 5); return err }},
		{"truncate", 1, func(s *script) error { return s.log.Truncate(5) }},
		{"preallocate", 1, func(s *script) error { return s.log.Preallocate(0, 100) }},
		{"sync truncate", 1, func(s *script) error { return s.log.Sync() }},
		{"create tmp", 1, func(s *script) (err error) { s.tmp, err = s.m.Create("/db/tmp"); return err }},
		{"write tmp", 1, write(&s.tmp, "new", 0)},
		{"sync tmp", 1, func(s *script) error { return s.tmp.Sync() }},
		{"rename", 1, func(s *script) error { return s.m.Rename("/db/tmp", "/db/log") }},
		{"syncdir rename", 1, func(s *script) error { return s.m.SyncDir("/db") }},
		{"remove", 1, func(s *script) error { return s.m.Remove("/db/log") }},
		{"syncdir remove", 1, func(s *script) error { return s.m.SyncDir("/db") }},
	}
	drop = []map[string]string{
		dir, dir, dir, with(""), with("hello"),
		with("hello"), with("hello world"), with("hello world"), with("hello world"), with("hello"),
		with("hello"), with("hello"), with("hello"), with("hello"), with("new"),
		with("new"), dir,
	}
	tear1 = append([]map[string]string(nil), drop...)
	tear1[3] = with("h")      // hello written, entry synced, bytes not
	tear1[5] = with("hello ") // WriteAtSync crashed between write and sync
	return steps, drop, tear1
}

func TestMemSetCrashAfterEachMutation(t *testing.T) {
	s := &script{m: NewMem()}
	steps, drop, tear1 := crashScript(s)
	must(t, s.run(steps))
	total := s.m.MutationCount()
	if total != len(drop) {
		t.Fatalf("the script made %d mutations, want %d", total, len(drop))
	}
	for _, mode := range []CrashMode{DropUnsynced, TearLastWrite(1)} {
		want := drop
		if mode != DropUnsynced {
			want = tear1
		}
		for n := 1; n <= total; n++ {
			t.Run(fmt.Sprintf("%v/n=%d", mode, n), func(t *testing.T) {
				crashAfter(t, n, mode, want[n-1])
			})
		}
	}
}

func crashAfter(t *testing.T, n int, mode CrashMode, want map[string]string) {
	s := &script{m: NewMem()}
	steps, _, _ := crashScript(s)
	s.m.SetCrashAfter(n, mode)
	err := s.run(steps)
	if !s.m.Crashed() || s.m.MutationCount() != n {
		t.Fatalf("Crashed = %v, MutationCount = %d; want true, %d", s.m.Crashed(), s.m.MutationCount(), n)
	}
	// The call that made the n-th mutation succeeded unless it had more
	// to do (WriteAtSync's sync); the next one failed.
	done := 0
	for _, step := range steps[:s.completed] {
		done += step.mutations
	}
	if s.completed < len(steps) && !errors.Is(err, ErrCrashed) {
		t.Fatalf("after the crash: %v, want ErrCrashed", err)
	}
	inFailedStep := s.completed < len(steps) && done < n && n < done+steps[s.completed].mutations
	if done != n && !inFailedStep {
		t.Fatalf("%d mutations in completed steps, crash after %d", done, n)
	}
	checkTree(t, s.m.CrashImage(), want)
}

func TestMemEveryCallFailsAfterCrash(t *testing.T) {
	m := NewMem()
	f := durableFile(t, m, "x")
	before := m.MutationCount()
	m.SetCrashAfter(1, DropUnsynced)
	must(t, f.Sync()) // the first mutation from now: succeeds, then the crash
	calls := map[string]error{
		"Create":        second(m.Create("/d/g")),
		"OpenReadWrite": second(m.OpenReadWrite("/d/f")),
		"Open":          second(m.Open("/d/f")),
		"Remove":        m.Remove("/d/f"),
		"Rename":        m.Rename("/d/f", "/d/g"),
		"MkdirAll":      m.MkdirAll("/e"),
		"List":          second(m.List("/d")),
		"SyncDir":       m.SyncDir("/d"),
		"Stat":          second(m.Stat("/d/f")),
		"ReadAt":        second(f.ReadAt(make([]byte, 1), 0)),
		"WriteAt":       second(f.WriteAt([]byte("y"), 0)),
		"WriteAtSync":   second(f.WriteAtSync([]byte("y"), 0)),
		"Sync":          f.Sync(),
		"Truncate":      f.Truncate(0),
		"Preallocate":   f.Preallocate(0, 1),
		"Size":          second(f.Size()),
		"Close":         f.Close(),
	}
	for call, err := range calls {
		if !errors.Is(err, ErrCrashed) {
			t.Errorf("%s after the crash: %v, want ErrCrashed", call, err)
		}
	}
	if got := m.MutationCount(); got != before+1 {
		t.Fatalf("MutationCount = %d, want %d: failed calls must not count", got, before+1)
	}
	checkTree(t, m.CrashImage(), map[string]string{"/d/": "", "/d/f": "x"})
}

func TestMemCrashImageIsAFreshDurableCopy(t *testing.T) {
	m := NewMem()
	closeFile(t, durableFile(t, m, "x"))
	if m.CrashImage() != nil {
		t.Fatal("CrashImage before any crash is not nil")
	}
	first := m.Crash(DropUnsynced)
	again := m.Crash(TearLastWrite(5)) // already crashed: the same image
	must(t, first.Remove("/d/f"))
	must(t, first.SyncDir("/d"))
	want := map[string]string{"/d/": "", "/d/f": "x"}
	checkTree(t, again, want)
	image := m.CrashImage()
	checkTree(t, image, want)
	if image.MutationCount() != 0 || image.Crashed() {
		t.Fatal("an image starts with mutations or crashed")
	}
	checkTree(t, image.Crash(DropUnsynced), want) // every byte durable
}

func TestMemSetCrashAfterCountsFromNowAndDisarms(t *testing.T) {
	m := NewMem()
	must(t, m.MkdirAll("/d"))
	m.SetCrashAfter(2, DropUnsynced)
	must(t, m.SyncDir("/d"))
	m.SetCrashAfter(0, DropUnsynced) // disarmed
	for range 3 {
		must(t, m.SyncDir("/d"))
	}
	if m.Crashed() {
		t.Fatal("crashed after SetCrashAfter(0)")
	}
	m.SetCrashAfter(2, DropUnsynced)
	must(t, m.SyncDir("/d"))
	must(t, m.SyncDir("/d"))
	if !m.Crashed() || m.MutationCount() != 7 {
		t.Fatalf("Crashed = %v at %d mutations; want true at 7", m.Crashed(), m.MutationCount())
	}
}

// TestMemWriteBackSomeKeepsEachSectorOldOrNew overwrites some sectors of a
// durable file and appends more without a sync: each seed's image keeps the
// durable size or the new one, and each sector its durable bytes (zeros
// past the durable size) or its new ones; the same seed makes the same
// image, and over the seeds every sector is seen both ways.
func TestMemWriteBackSomeKeepsEachSectorOldOrNew(t *testing.T) {
	const sectors = 6
	old := bytes.Repeat([]byte{'o'}, 3*sectorSize)
	build := func() *MemFS {
		m := NewMem()
		f := durableFile(t, m, string(old))
		writeAt(t, f, bytes.Repeat([]byte{'n'}, (sectors-1)*sectorSize+100), sectorSize)
		return m
	}
	m := build()
	newData := readFile(t, m, "/d/f")
	seen := map[[2]int]bool{} // sector, 0 old / 1 new
	for seed := range 64 {
		got := readFile(t, m.Crash(WriteBackSome(seed)), "/d/f")
		m = build()
		if again := readFile(t, m.Crash(WriteBackSome(seed)), "/d/f"); !bytes.Equal(got, again) {
			t.Fatalf("seed %d: two images differ", seed)
		}
		m = build()
		if len(got) != len(old) && len(got) != len(newData) {
			t.Fatalf("seed %d: size %d, want %d or %d", seed, len(got), len(old), len(newData))
		}
		for i := 0; i*sectorSize < len(got); i++ {
			at, end := i*sectorSize, min((i+1)*sectorSize, len(got))
			oldSector := make([]byte, end-at)
			if at < len(old) {
				copy(oldSector, old[at:min(end, len(old))])
			}
			switch {
			case bytes.Equal(got[at:end], newData[at:end]):
				seen[[2]int{i, 1}] = true
			case bytes.Equal(got[at:end], oldSector):
				seen[[2]int{i, 0}] = true
			default:
				t.Fatalf("seed %d: sector %d is neither its old nor its new bytes: %q", seed, i, got[at:end])
			}
		}
	}
	for i := 1; i <= sectors; i++ { // sector 0 never changed
		if !seen[[2]int{i, 0}] || !seen[[2]int{i, 1}] {
			t.Fatalf("sector %d was not seen both written back and not: %v", i, seen)
		}
	}
}
