package volatile

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"sync"
	"testing"

	"github.com/felixbroker/felix/segment/vfs"
)

func TestFilesKeepWhatIsWrittenUntilRemoved(t *testing.T) {
	fs := New()
	if err := fs.MkdirAll("/a/b"); err != nil {
		t.Fatal(err)
	}
	f, err := fs.Create("/a/b/x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("world"), 6); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAtSync([]byte("hello "), 0); err != nil {
		t.Fatal(err)
	}
	r, err := fs.Open("/a/b/x")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 20)
	n, err := r.ReadAt(buf, 0)
	if n != 11 || !errors.Is(err, io.EOF) || string(buf[:n]) != "hello world" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	if _, err := r.WriteAt([]byte("x"), 0); err == nil {
		t.Fatal("a read-only handle wrote")
	}
	if err := f.Truncate(5); err != nil {
		t.Fatal(err)
	}
	if size, _ := fs.Stat("/a/b/x"); size != 5 {
		t.Fatalf("size %d after truncate", size)
	}
	if _, err := fs.Create("/a/b/x"); !errors.Is(err, vfs.ErrExist) {
		t.Fatalf("create over a file: %v", err)
	}
	if _, err := fs.Create("/nope/x"); !errors.Is(err, vfs.ErrNotExist) {
		t.Fatalf("create without a directory: %v", err)
	}
	if err := fs.Remove("/a/b/x"); err != nil {
		t.Fatal(err)
	}
	if _, err := fs.Open("/a/b/x"); !errors.Is(err, vfs.ErrNotExist) {
		t.Fatalf("open after remove: %v", err)
	}
	if n, _ := r.ReadAt(buf, 0); n != 5 { // an open handle outlives its name
		t.Fatalf("read through a removed file's handle: %d bytes", n)
	}
	if err := r.Close(); err != nil || r.Close() == nil {
		t.Fatalf("close twice: %v", err)
	}
}

func TestRenameReplacesAndListIsSorted(t *testing.T) {
	fs := New()
	fs.MkdirAll("/d/sub")
	for _, n := range []string{"/d/b", "/d/a", "/d/c"} {
		f, _ := fs.Create(n)
		f.WriteAt([]byte(n), 0)
	}
	if err := fs.Rename("/d/c", "/d/a"); err != nil {
		t.Fatal(err)
	}
	names, err := fs.List("/d")
	if err != nil || !slices.Equal(names, []string{"a", "b", "sub"}) {
		t.Fatalf("list %v, %v", names, err)
	}
	f, _ := fs.Open("/d/a")
	buf := make([]byte, 4)
	f.ReadAt(buf, 0)
	if string(buf) != "/d/c" {
		t.Fatalf("renamed file holds %q", buf)
	}
	if err := fs.SyncDir("/d"); err != nil {
		t.Fatal(err)
	}
	if _, err := fs.Open("/d/sub"); err == nil {
		t.Fatal("opened a directory")
	}
	if fs.Bytes() != 8 {
		t.Fatalf("bytes %d", fs.Bytes())
	}
}

func TestReadsAndWritesOfOneFileRunTogether(t *testing.T) {
	fs := New()
	f, _ := fs.Create("/f")
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			p := bytes.Repeat([]byte{byte('a' + w)}, 1000)
			for i := range 50 {
				f.WriteAt(p, int64((i*4+w)*1000))
			}
		})
		wg.Go(func() {
			buf := make([]byte, 1000)
			for i := range 50 {
				f.ReadAt(buf, int64(i*1000))
			}
		})
	}
	wg.Wait()
	buf := make([]byte, 1000)
	for i := range 200 {
		f.ReadAt(buf, int64(i*1000))
		if !bytes.Equal(buf, bytes.Repeat([]byte{byte('a' + i%4)}, 1000)) {
			t.Fatalf("block %d holds %q..", i, buf[:4])
		}
	}
}
