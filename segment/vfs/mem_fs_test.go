package vfs

import (
	"errors"
	"fmt"
	"maps"
	"path"
	"sync"
	"syscall"
	"testing"
)

func TestMemConformance(t *testing.T) {
	m := NewMem()
	must(t, m.MkdirAll("/root"))
	testConformance(t, m, "/root")
}

func TestMemNamesAreCleaned(t *testing.T) {
	m := NewMem()
	must(t, m.MkdirAll("a/b"))
	closeFile(t, create(t, m, "/a/./b/../b/f"))
	if _, err := m.Stat("a/b/f"); err != nil {
		t.Fatalf("relative and absolute names differ: %v", err)
	}
	if err := m.Rename("/a", "/a/b/c"); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("Rename of a directory into itself: %v, want EINVAL", err)
	}
	if _, err := m.Create("/"); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("Create of the root: %v, want EINVAL", err)
	}
}

// tree returns every entry of an FS: directories as "dir/", files with
// their contents.
func tree(t *testing.T, m *MemFS) map[string]string {
	t.Helper()
	out := map[string]string{}
	var walk func(dir string)
	walk = func(dir string) {
		names, err := m.List(dir)
		must(t, err)
		for _, name := range names {
			p := path.Join(dir, name)
			if _, err := m.List(p); err == nil {
				out[p+"/"] = ""
				walk(p)
				continue
			}
			out[p] = string(readFile(t, m, p))
		}
	}
	walk("/")
	return out
}

func checkTree(t *testing.T, m *MemFS, want map[string]string) {
	t.Helper()
	if got := tree(t, m); !maps.Equal(got, want) {
		t.Fatalf("image = %q, want %q", got, want)
	}
}

// durableFile makes /d/f hold data, durably, and returns it open.
func durableFile(t *testing.T, m *MemFS, data string) File {
	t.Helper()
	must(t, m.MkdirAll("/d"))
	f := create(t, m, "/d/f")
	must(t, m.SyncDir("/d"))
	if _, err := f.WriteAtSync([]byte(data), 0); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestMemUnsyncedWriteIsLostAndSyncedWriteKept(t *testing.T) {
	for _, synced := range []bool{false, true} {
		t.Run(fmt.Sprint("synced=", synced), func(t *testing.T) {
			m := NewMem()
			f := durableFile(t, m, "")
			writeAt(t, f, []byte("hello"), 0)
			want := ""
			if synced {
				must(t, f.Sync())
				want = "hello"
			}
			checkTree(t, m.Crash(DropUnsynced), map[string]string{"/d/": "", "/d/f": want})
		})
	}
}

func TestMemReadsSeeCurrentBytes(t *testing.T) {
	m := NewMem()
	f := durableFile(t, m, "durable")
	writeAt(t, f, []byte("CURRENT"), 0)
	if got := readFile(t, m, "/d/f"); string(got) != "CURRENT" {
		t.Fatalf("read %q, want the unsynced bytes", got)
	}
}

func TestMemCreatedFileVanishesWithoutSyncDir(t *testing.T) {
	m := NewMem()
	must(t, m.MkdirAll("/d"))
	f := create(t, m, "/d/f")
	if _, err := f.WriteAtSync([]byte("synced"), 0); err != nil {
		t.Fatal(err)
	}
	image := m.Crash(DropUnsynced)
	checkTree(t, image, map[string]string{"/d/": ""})
	if _, err := image.Stat("/d/f"); !errors.Is(err, ErrNotExist) {
		t.Fatalf("Stat in the image: %v, want ErrNotExist", err)
	}
}

func TestMemMkdirAllIsDurable(t *testing.T) {
	m := NewMem()
	must(t, m.MkdirAll("/a/b/c"))
	checkTree(t, m.Crash(DropUnsynced), map[string]string{"/a/": "", "/a/b/": "", "/a/b/c/": ""})
}

func TestMemRenameDurability(t *testing.T) {
	for _, synced := range []bool{false, true} {
		t.Run(fmt.Sprint("synced=", synced), func(t *testing.T) {
			m := NewMem()
			closeFile(t, durableFile(t, m, "new"))
			g := create(t, m, "/d/g")
			_, err := g.WriteAtSync([]byte("old"), 0)
			must(t, err)
			must(t, m.SyncDir("/d"))
			must(t, m.Rename("/d/f", "/d/g")) // replaces g
			want := map[string]string{"/d/": "", "/d/f": "new", "/d/g": "old"}
			if synced {
				must(t, m.SyncDir("/d"))
				want = map[string]string{"/d/": "", "/d/g": "new"}
			}
			checkTree(t, m.Crash(DropUnsynced), want)
		})
	}
}

func TestMemRenameAcrossDirectoriesIsDurablePerDirectory(t *testing.T) {
	m := NewMem()
	closeFile(t, durableFile(t, m, "x"))
	must(t, m.MkdirAll("/e"))
	must(t, m.Rename("/d/f", "/e/f"))
	must(t, m.SyncDir("/e"))
	// Only the new directory was synced: the old entry is durable too.
	checkTree(t, m.Crash(DropUnsynced), map[string]string{"/d/": "", "/d/f": "x", "/e/": "", "/e/f": "x"})
}

func TestMemRemoveDurability(t *testing.T) {
	for _, synced := range []bool{false, true} {
		t.Run(fmt.Sprint("synced=", synced), func(t *testing.T) {
			m := NewMem()
			closeFile(t, durableFile(t, m, "x"))
			must(t, m.Remove("/d/f"))
			want := map[string]string{"/d/": "", "/d/f": "x"}
			if synced {
				must(t, m.SyncDir("/d"))
				want = map[string]string{"/d/": ""}
			}
			checkTree(t, m.Crash(DropUnsynced), want)
		})
	}
}

func TestMemTruncateDurability(t *testing.T) {
	cases := []struct {
		size   int64
		synced bool
		want   string
	}{
		{4, false, "0123456789"},
		{4, true, "0123"},
		{12, false, "0123456789"},
		{12, true, "0123456789\x00\x00"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("size=%d,synced=%v", c.size, c.synced), func(t *testing.T) {
			m := NewMem()
			f := durableFile(t, m, "0123456789")
			must(t, f.Truncate(c.size))
			if c.synced {
				must(t, f.Sync())
			}
			checkTree(t, m.Crash(DropUnsynced), map[string]string{"/d/": "", "/d/f": c.want})
		})
	}
}

func TestMemPreallocateChangesNothingDurable(t *testing.T) {
	m := NewMem()
	f := durableFile(t, m, "abc")
	must(t, f.Preallocate(0, 4096))
	must(t, f.Sync())
	checkTree(t, m.Crash(DropUnsynced), map[string]string{"/d/": "", "/d/f": "abc"})
}

func TestMemConcurrentWritersAndReaders(t *testing.T) {
	m := NewMem()
	f := durableFile(t, m, "")
	const writers, chunk = 4, 64
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			p := make([]byte, chunk)
			for j := range p {
				p[j] = byte('a' + i)
			}
			for range 50 {
				if _, err := f.WriteAt(p, int64(i*chunk)); err != nil {
					t.Error(err)
				}
				if _, err := f.ReadAt(make([]byte, chunk), int64(i*chunk)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Go(func() {
		for range 50 {
			if _, err := m.List("/d"); err != nil {
				t.Error(err)
			}
		}
	})
	wg.Wait()
	// durableFile: MkdirAll, Create, SyncDir, WriteAtSync (two); then the writes.
	if got, want := m.MutationCount(), 5+writers*50; got != want {
		t.Fatalf("MutationCount = %d, want %d", got, want)
	}
	got := readFile(t, m, "/d/f")
	for i := range writers {
		for _, b := range got[i*chunk : (i+1)*chunk] {
			if b != byte('a'+i) {
				t.Fatalf("range %d holds %q", i, got[i*chunk:(i+1)*chunk])
			}
		}
	}
}
