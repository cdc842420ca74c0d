// Package volatile is a vfs.FS held in process memory with no durability at
// all: the storage of a cache that runs without a data directory. The cache
// keeps the same logs, format, compaction and watches over it as over a
// disk, and everything in it is lost when the process exits.
//
// It must never be used where durability is promised: Sync, WriteAtSync and
// SyncDir succeed without doing anything, and there is no crash to simulate
// (segment/vfs.MemFS is the FS for crash tests).
//
// Invariants: a path names a file or a directory, never both; a file's
// entry exists only while its parent directory does (directories are never
// removed); Rename replaces its target atomically. Each file has its own
// read-write lock, so reads of one file run in parallel with each other and
// with reads and writes of every other file; the FS lock guards only the
// names, and is never held while a file's lock is taken.
package volatile
