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

// pageKeptBytesMax bounds what PageKept writes (and keeps until it ends).
const pageKeptBytesMax = 2 << 30

// PageKept is PageAppend with every file kept until the run ends, as a log
// keeps its segments: the dirty pages build up and the kernel writes them
// back, and throttles the writer at its dirty limits, as it does any
// writer of that much data. With o.TotalBytes the size of what a log row
// writes, it is the bare page-cache bandwidth of that volume on this
// machine; the files are removed after the clock stops. It writes at most
// 2 GiB, within o.Duration when one is set. A RoleBaseline named
// "pagekept/raw".
func PageKept(ctx context.Context, dir string, o PageCacheOptions) (bench.Result, error) {
	if o.TotalBytes <= 0 || o.TotalBytes > pageKeptBytesMax {
		o.TotalBytes = pageKeptBytesMax // what it leaves on the disk is bounded, whatever the duration
	}
	o, err := o.withDefaults()
	if err != nil {
		return bench.Result{}, err
	}
	file := &appendFile{dir: dir, limit: o.FileBytes, keep: true}
	defer file.close()
	return pageWrites(ctx, "pagekept", map[string]string{"file": "fresh, kept"}, dir, o, file.next,
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
	// keep leaves each full file in place (kept lists them) until close.
	keep bool
	kept []string
}

// next returns the offset for the next n bytes, beginning a fresh file
// when they would pass the limit (or none is open yet).
func (a *appendFile) next(n int) (int64, error) {
	if a.f != nil && a.off+int64(n) > a.limit {
		if err := a.retire(); err != nil {
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

// retire closes the current file, if any, and removes it unless the run
// keeps its files.
func (a *appendFile) retire() error {
	if a.f == nil {
		return nil
	}
	err := a.f.Close()
	if a.keep {
		a.kept = append(a.kept, a.f.Name())
	} else if rmErr := os.Remove(a.f.Name()); err == nil {
		err = rmErr
	}
	a.f = nil
	if err != nil {
		return fmt.Errorf("felix/bench/disk: %w", err)
	}
	return nil
}

// close retires the current file and removes every file kept.
func (a *appendFile) close() error {
	err := a.retire()
	for _, name := range a.kept {
		if rmErr := os.Remove(name); err == nil && rmErr != nil {
			err = fmt.Errorf("felix/bench/disk: %w", rmErr)
		}
	}
	a.kept = nil
	return err
}
