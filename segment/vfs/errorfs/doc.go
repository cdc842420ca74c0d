// Package errorfs wraps a vfs.FS and makes chosen calls fail: the Nth
// matching call or every one, by kind of call and by a substring of the
// file name, with a chosen error (syscall.EIO, syscall.ENOSPC, ...) or a
// short write. Tests use it to drive the storage engine down its error
// paths deterministically, alone or over a crashing vfs.MemFS.
//
// A failed call never reaches the wrapped FS, except for the prefix a
// short write writes (with WriteAt, so a failed WriteAtSync leaves that
// prefix unsynced, as a short write linked to an fdatasync does). So a
// failed Sync leaves the data unsynced, and a retry after Clear may well
// succeed; the engine must not count on that (after a real fsync error
// the kernel may have dropped the dirty pages).
//
// Rules are independent: each counts the calls it matches from the moment
// it is injected; a call fails when any rule says so, with the error of
// the rule injected first. Every injected error matches ErrInjected and
// the rule's Err with errors.Is. Close and Name are never failed.
//
// FS is safe for concurrent use; one lock guards the rules, and it is
// never held while calling the wrapped FS.
package errorfs
