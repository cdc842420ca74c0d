// Package datadir guards a broker's data directory: one process at a time.
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
// This package must never remove the lock file (a remover could unlink the
// file another process has just locked, and a third process would then lock
// a new file beside it), and never be used by read-only tools: `felix log
// verify` and `felix log dump` open segments read-only and take no lock.
package datadir
