package vfs

import (
	"errors"
	"io"
	"io/fs"
)

// FS is every file-system operation the storage engine performs. Names are
// slash-separated paths as the caller built them (filepath.Join); an FS
// does not interpret them beyond that.
//
// Durability rules every implementation keeps, and MemFS enforces on Crash:
//   - bytes written to a File survive a crash only once a later Sync or
//     WriteAtSync of that File has returned nil;
//   - a created, renamed or removed directory entry survives a crash only
//     once SyncDir of its directory has returned nil after the change;
//   - Truncate and Preallocate change the size durably only once the File
//     is synced.
type FS interface {
	// Create makes a new, empty file for reading and writing. It fails
	// with an error matching ErrExist when the name is taken.
	Create(name string) (File, error)
	// OpenReadWrite opens an existing file for reading and writing.
	OpenReadWrite(name string) (File, error)
	// Open opens an existing file for reading only.
	Open(name string) (File, error)
	// Remove deletes a file (not a directory).
	Remove(name string) error
	// RemoveDir deletes an empty directory.
	RemoveDir(dir string) error
	// Rename atomically replaces newname with oldname.
	Rename(oldname, newname string) error
	// MkdirAll creates a directory and its parents, syncing each parent
	// it created an entry in.
	MkdirAll(dir string) error
	// List returns the names (not paths) of the entries of dir, sorted.
	List(dir string) ([]string, error)
	// SyncDir makes the entries of dir durable.
	SyncDir(dir string) error
	// Stat returns the size of a file.
	Stat(name string) (size int64, err error)
}

// File is an open file. ReadAt and the writes are safe to call from several
// goroutines at once on distinct ranges; Close is not concurrent with any
// other call.
type File interface {
	io.ReaderAt
	io.WriterAt
	io.Closer

	// Sync makes the file's data durable (fdatasync).
	Sync() error
	// WriteAtSync writes p at off and then syncs, as one submission on
	// the io_uring path (a write linked to an fdatasync). It returns nil
	// only when both completed in full.
	WriteAtSync(p []byte, off int64) (int, error)
	// Truncate sets the file's size.
	Truncate(size int64) error
	// Preallocate reserves [off, off+length) on disk without changing the
	// contents (fallocate with KEEP_SIZE where the platform has it; a no-op
	// returning nil where it does not).
	Preallocate(off, length int64) error
	// Size returns the current size of the file.
	Size() (int64, error)
	// Name returns the name the file was opened with.
	Name() string
}

// Errors a caller can test with errors.Is, whatever the implementation.
var (
	ErrExist    = fs.ErrExist    // the same value os errors match
	ErrNotExist = fs.ErrNotExist // the same value os errors match
	ErrClosed   = errors.New("felix/vfs: file closed")
	// ErrCrashed is returned by every operation of a MemFS, and of its
	// open files, once it has crashed: the process it simulates is dead.
	ErrCrashed = errors.New("felix/vfs: file system crashed")
)
