// Package vfs is the one seam between the storage engine and files: every
// file and directory operation of segment/ goes through an FS, so tests
// can swap the real file system for one that crashes or fails on demand.
//
// Three implementations:
//
//   - NewOS(d): the real file system. Reads, writes and syncs go through
//     a ring.Driver. A driver with a waiting path of its own (ring.Blocking:
//     the io_uring driver) gets ReadAt, WriteAt, Sync and WriteAtSync whole
//     and runs each its fastest way (ring's package doc says which goes
//     where, and why). With any other driver (the portable worker pool)
//     each is a Submit waited for here, WriteAtSync one submission of a
//     write linked to an fdatasync. Creating, opening, renaming, removing,
//     listing and directory syncs are plain system calls on the caller's
//     goroutine. The waiting wrappers reuse pooled Completions, so a steady
//     stream of ReadAt, WriteAt, Sync and WriteAtSync allocates nothing.
//   - MemFS (NewMem): memory that keeps current and durable state apart
//     and can crash (SetCrashAfter, Crash), leaving an image of what a
//     machine crash at that instant would leave.
//   - errorfs.Wrap(fs): fails chosen calls with chosen errors (EIO,
//     ENOSPC, short writes), on the Nth call or on every one.
//
// # What an FS must never do
//
//   - Report a write or a sync as done before it is: Sync and WriteAtSync
//     return nil only when the bytes are durable.
//   - Sync behind the caller's back (Close syncs nothing) or make a
//     directory entry durable without SyncDir (MkdirAll excepted: it syncs
//     each parent it adds an entry to, so a new path is durable at once).
//   - Hide an error's cause: errors from files match, with errors.Is,
//     ErrNotExist, ErrExist, ErrClosed, ErrCrashed and the syscall.Errno
//     underneath (syscall.ENOSPC, syscall.EIO, ...).
//   - Remove a directory through Remove, which removes files only, or open
//     one as a File (Open and OpenReadWrite refuse it with EISDIR).
//   - Change a file's size or contents in Preallocate: it reserves space
//     (fallocate with KEEP_SIZE on Linux) or, where the platform or the
//     file system cannot, does nothing and returns nil.
//
// # Durability model
//
// A file's bytes and size, and a directory's entries, each exist twice:
// as they are now (what every call sees) and as they are durably (what a
// crash leaves). Only a sync copies the first onto the second, and only
// for what it syncs:
//
//	              WriteAt, Truncate                Create, Remove, Rename
//	                     |                                  |
//	                     v                                  v
//	file   +----------------------+      dir   +----------------------+
//	       | current bytes + size |            |   current entries    |
//	       +----------------------+            +----------------------+
//	                     |                                  |
//	        Sync, WriteAtSync (copy all)          SyncDir (copy all)
//	                     v                                  v
//	       +----------------------+            +----------------------+
//	       | durable bytes + size |            |   durable entries    |
//	       +----------------------+            +----------------------+
//	                     \                                  /
//	                      '------------> crash <-----------'
//	        image = the durable entries from the root down, each file
//	        with its durable bytes (plus a torn prefix of the most recent
//	        unsynced write, in TearLastWrite mode; or, in WriteBackSome
//	        mode, each unsynced 512-byte sector new or durable and each
//	        file its new or durable size, chosen by a seed)
//
// Consequences a caller must respect: a created file survives only once
// its directory is synced (and its bytes only once the file is synced); a
// rename or a remove survives only once the directory is synced, each
// directory of a cross-directory rename on its own; an unsynced Truncate
// is lost (WriteBackSome: may be lost); Preallocate changes nothing a
// crash could show. A file reached
// through several durable entries (a rename whose old directory was never
// synced) appears under each of them in the image.
//
// # Mutations (MemFS)
//
// A MemFS counts its successful mutating calls; SetCrashAfter(n) crashes
// it when the n-th one from then completes. These count, once per
// successful call unless said otherwise:
//
//	FS:   Create, Remove, Rename, MkdirAll (even when every directory
//	      existed), SyncDir
//	File: WriteAt (even of zero bytes), Sync, Truncate, Preallocate,
//	      WriteAtSync (TWICE: its write, then its sync, so a crash can
//	      fall between them; it then returns len(p) and ErrCrashed)
//
// Calls that fail (ErrExist, ErrNotExist, ErrClosed, bad arguments) do not
// count. Open, OpenReadWrite, List, Stat, ReadAt, Size, Name and Close
// never count. After the crash every call on the FS and on its open files
// (Close included; Name aside) fails with ErrCrashed.
//
// # Concurrency
//
// Every FS is safe for concurrent use. A File's ReadAt and writes may run
// from several goroutines at once on distinct ranges; Close must not run
// with any other call of the same File. A MemFS has one lock over all its
// state, taken by every call on it and on its files; nothing is called
// while holding it. The OS FS holds no lock: a pooled waiter belongs to one
// call at a time, the driver's Done callbacks only signal its channel, and
// a ring.Blocking driver's methods are safe for concurrent use.
package vfs
