// Package disk measures the disk's own limits, the baselines every Felix
// storage figure is set beside: what one durable append costs, how many
// records per second group commit can make durable, and how fast the page
// cache takes writes. `felix bench fsync` runs them all (RunSuite); the
// broker workloads run the ones they need and AddBaseline the results.
//
//	Fdatasync     pwrite(RecordBytes) + fdatasync, one at a time, on a
//	              Growing file (every sync commits size and allocation) and
//	              on a Prezeroed one (zero-filled and synced first, so syncs
//	              flush data only). Latency per round.
//	GroupCommit   Writers goroutines each hand one record at a time to ONE
//	              write+fdatasync loop; each flush writes everything queued
//	              before it began in one write. Records/s is the ceiling;
//	              latency is each record's hand-off to ack.
//	PageCache     large pwrites, never synced, round a file that stays in
//	              memory: the ceiling of copying into cached pages.
//	PageAppend    the same pwrites, never synced, each at the end of a fresh
//	              file (replaced, and removed, every FileBytes): the page
//	              cache's bandwidth for new pages, the way a log writes, and
//	              the ceiling of fsync=none.
//	PageKept      PageAppend with every file kept until the run ends, as a
//	              log keeps its segments: given the volume a log writes, the
//	              bandwidth a bare writer of that much data gets, dirty-page
//	              writeback and the kernel's throttling included.
//
// Each exists bare (golang.org/x/sys/unix: pwrite, fdatasync; F_FULLFSYNC
// on macOS; os.File on Windows), returning a RoleBaseline result, and the
// first two also through a ring.Driver (RingFdatasync, RingGroupCommit:
// ring.WriteAtSync, a write linked to an fdatasync), returning a
// RoleWorkload result to be set beside the bare one. The ring variants keep
// the bare loops' shape (one flush in flight) so that the comparison
// measures the IO path and nothing else.
//
// # What it must never do
//
//   - Measure anywhere but the directory it is given: /tmp may be a tmpfs,
//     where fdatasync costs nothing. The caller names a directory on the
//     disk under test; Result.Machine records its file system.
//   - Leave its file behind: each measurement creates one file in the
//     directory (PageAppend one per FileBytes written, each removed before
//     the next; PageKept one per FileBytes, all removed at the end) and
//     removes it, error or not.
//   - Allocate per record: buffers, queues and ack channels exist before
//     the clock starts.
//   - Run unbounded: every measurement needs a count or a duration
//     (bench.ErrNoLimit), and the file never grows past FileBytes (a
//     Growing file is cut back to empty there, once per FileBytes).
//
// # Ownership in GroupCommit
//
// One loop goroutine owns the file, the write buffer and the flush. The
// queue of waiting writers is guarded by one mutex, held only to append or
// swap the queue; each writer waits on its own channel for its ack. A
// writer's record is read by the loop only while that writer is queued.
// After a failed flush the loop acks everyone without IO and each writer
// returns the error.
package disk
