package disk

import (
	"context"
	"fmt"
	"os"

	"github.com/felixbroker/felix/bench"
)

// PageAppend measures how fast the page cache takes writes the way a log
// makes them: o.WriteBytes per pwrite, each at the end of a fresh file,
// never synced. When the next write would pass o.FileBytes the file is
// closed and removed and a new one begun, so every write lands in a page
// the file never had (a removed file's dirty pages are dropped, not
// written back, so dirty memory never builds up to throttle the loop). The
// ceiling of an fsync=none log's appends; PageCache, which rewrites pages
// that stay cached, is the ceiling of copying into memory. A RoleBaseline
// named "pageappend/raw".
func PageAppend(ctx context.Context, dir string, o PageCacheOptions) (bench.Result, error) {
	o, err := o.withDefaults()
	if err != nil {
		return bench.Result{}, err
	}
	file := &appendFile{dir: dir, limit: o.FileBytes}
	defer file.close()
	return pageWrites(ctx, "pageappend", map[string]string{"file": "fresh"}, dir, o, file.next,
		func() *os.File { return file.f })
}

// appendFile is PageAppend's file: written only at its end, replaced by a
// fresh one when full, removed when closed. Owned by one goroutine. It
// allocates once per file (the os.File), never per write.
type appendFile struct {
	dir   string
	limit int64 // FileBytes
	f     *os.File
	off   int64 // the file's size: where the next write goes
}

// next returns the offset for the next n bytes, beginning a fresh file
// when they would pass the limit (or none is open yet).
func (a *appendFile) next(n int) (int64, error) {
	if a.f != nil && a.off+int64(n) > a.limit {
		if err := a.close(); err != nil {
			return 0, err
		}
	}
	if a.f == nil {
		f, err := os.CreateTemp(a.dir, "felix-bench-append-*.dat")
		if err != nil {
			return 0, fmt.Errorf("felix/bench/disk: %w", err)
		}
		a.f, a.off = f, 0
	}
	off := a.off
	a.off += int64(n)
	return off, nil
}

// close closes and removes the current file, if any.
func (a *appendFile) close() error {
	if a.f == nil {
		return nil
	}
	err := a.f.Close()
	if rmErr := os.Remove(a.f.Name()); err == nil {
		err = rmErr
	}
	a.f = nil
	if err != nil {
		return fmt.Errorf("felix/bench/disk: %w", err)
	}
	return nil
}
