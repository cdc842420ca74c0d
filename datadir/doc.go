// Package datadir guards a broker's data directory: one process at a time
// (the lock), and one identity per disk (the disk id).
//
// A broker takes the directory's lock before anything reads or writes its
// files (recovery included) and holds it for the life of the process. A
// second broker on the same directory is refused with an error that names
// the directory and the pid holding it, instead of two writers
// acknowledging different records at the same offsets.
//
// The lock is an OS advisory lock on the file LockFile inside the directory:
// flock(2) on Unix, LockFileEx on Windows. It belongs to the open file, so
// it is released when the holder closes it or exits in any way, kill -9
// included; a stale lock file left behind locks nothing. The file's content
// is the holder's pid, written after the lock is taken, for the error
// message only: the lock, never the content, decides.
//
// The disk id (DiskIDFile) is 128 random bits drawn the first time a
// directory is opened without one and written durably before it is used.
// The cluster names a replica by broker and disk id: a wiped or replaced
// disk has a new id, so it is a new replica that holds nothing, never the
// old one answering with a log it no longer has. A damaged id file is
// refused, never redrawn.
//
// This package must never remove the lock file (a remover could unlink the
// file another process has just locked, and a third process would then lock
// a new file beside it), and never be used by read-only tools: `felix log
// verify` and `felix log dump` open segments read-only and take no lock.
package datadir
