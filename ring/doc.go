// Package ring moves bytes between the storage engine and its files: reads,
// writes, writevs and fdatasyncs, submitted as batches of caller-owned
// Completion records and reported back through each record's Done callback.
// Two drivers sit behind the one Driver interface:
//
//   - io_uring (Linux): our own binding over raw io_uring_setup(2) and
//     io_uring_enter(2), with the rings mmap'd and read and written in place.
//   - portable (everywhere): a bounded pool of worker goroutines running
//     pread/pwrite/pwritev/fdatasync (F_FULLFSYNC on macOS; ReadFile,
//     WriteFile and FlushFileBuffers on Windows) with the same link semantics.
//
// Open picks one from a Mode (FELIX_IO through ModeFromEnv): ModeAuto tries
// io_uring and, when the kernel refuses it, logs why at Warn and uses the
// portable driver; ModeUring fails with ErrUnavailable instead. WriteAt,
// ReadAt, Fdatasync and WriteAtSync serve callers that wait anyway: a
// driver with a waiting path of its own (Blocking: both drivers here) runs
// each its fastest way, see "The waiting path"; any other as a Submit and
// a wait. The package knows nothing of records or segments.
//
// # What it must never do
//
//   - Allocate per operation. Completions belong to the caller and are
//     reused; the driver's tables, iovec arrays, harvest buffers and worker
//     scratch are sized once at Open. The sync helpers borrow waiters from
//     a bounded free list. (runtime.Pinner keeps a per-P cache of its
//     64-byte records that every GC empties, so a few such records are
//     allocated again after a GC; nothing is allocated per operation.)
//   - Hand the kernel a Go pointer it could outlive or that the GC cannot
//     see. user_data is a slot index into a fixed completion table, never a
//     pointer. Buffer addresses go into SQEs and iovecs as integers, in
//     memory the GC does not scan (the mmap'd SQE array and iovec arena),
//     and every buffer the kernel touches is pinned with the slot's
//     runtime.Pinner from submission until its CQE is reaped.
//   - Block the reaper. Done runs on the reaper goroutine (io_uring) or a
//     worker (portable): it must not block, must not call Close or a sync
//     helper, and may call Submit only with a batch that cannot wait for
//     free slots. A Done that blocks holds every later completion.
//   - Split a linked chain. A chain's slots are taken together and its SQEs
//     reach the SQ ring together, before one io_uring_enter; a chain longer
//     than the table (or the SQ) is refused with ErrChainTooLong.
//   - Lose a completion. The kernel must offer IORING_FEAT_NODROP; when it
//     parks CQEs in its overflow list (IORING_SQ_CQ_OVERFLOW) the reaper has
//     them flushed and reaps again. A dropped CQE (EBADR) panics: a waiter
//     would otherwise hang for ever.
//
// # Link semantics
//
// A Completion with Link set makes the next one of the same Submit wait for
// it to succeed in full; a chain ends at the first Completion without Link
// or at the end of the batch. An error, or a short read or write, completes
// the rest of the chain with -ECANCELED, unrun. Res is bytes or -errno, as
// in a CQE, in both drivers.
//
// # The waiting path
//
// A caller of WriteAt, ReadAt, Fdatasync or WriteAtSync waits anyway, and
// for one waiting caller handing the operation to another thread only adds
// to what it waits for: ext4 cannot do a buffered write without blocking,
// so io_uring hands it to an io-wq worker thread, fdatasync always goes to
// one, and the waiter is then woken; the portable driver hands every
// operation to a pool goroutine and back. Each wake-up of a sleeping
// thread costs tens of microseconds on the VMs Felix was measured on. Both
// drivers are therefore Blocking drivers that route each waiting operation
// the same way (waitPath, shared):
//
//	WriteAt      pwrite on the caller's thread, always
//	ReadAt       pread on the caller's thread, always
//	Fdatasync    fdatasync on the caller's thread while at most directMax
//	             waiting durability operations are in progress, this one
//	             included; past that, one fdatasync through Submit (the
//	             ring, or the portable worker pool)
//	WriteAtSync  pwrite then fdatasync on the caller's thread under the
//	             same limit; past it, a write linked to an fdatasync
//	             through Submit
//
// "fdatasync" is F_FULLFSYNC on macOS and fsync on the other BSDs; on
// Windows the direct calls are WriteFile, ReadFile and FlushFileBuffers,
// each with an OVERLAPPED (and its event) borrowed from a bounded free
// list, since an OVERLAPPED must not move while its IO is pending.
//
// directMax is GOMAXPROCS, read at Open. A durability operation on its
// caller's thread holds a P for as long as the disk takes (the runtime
// takes it back only after 20us or more), so past one per P the goroutines
// behind them would wait for a processor and the disk would see few
// operations at a time. Through the ring a waiter parks and gives its P
// back at once, io-wq runs the operations side by side and the kernel
// serves several with one flush; through the portable pool its Workers
// goroutines do the same with blocking system calls (the runtime hands
// their Ps on). Close sets a flag that the direct path reads first, so
// every waiting operation begun after Close has started is ErrClosed;
// one already past that check finishes (Close owns no file).
//
// The result, measured against raw system calls in the same run: on the
// waiting path each lone operation costs what the raw system call costs, on
// either driver, where through the ring a page-cache write or a cached read
// cost several times raw and a durable write a quarter to a half more; with
// many durable callers at once on a small machine io_uring does better than
// raw, since its ring lets the kernel serve several syncs with one flush. The figures, the
// machines and the commands that rerun them are in docs/benchmarks.md, "IO
// path: io_uring vs portable"; what was tried and dropped on the way is its
// History. Operations submitted with Submit always go through the ring (or
// the portable pool).
//
// # Goroutines, ownership and lock order (io_uring)
//
// Callers run Submit; one reaper goroutine per driver reaps. A slot moves
// free list (mu) -> submitter (takes it under mu, fills the table, pins,
// writes the SQE under sqMu+mu) -> kernel -> reaper (after its CQE: result,
// unpin, free, under mu) -> Done, called with no lock held.
//
//	sqMu   outer. SQE array, our SQ tail, submitting io_uring_enter calls.
//	 mu    inner. Completion table, pins, free list, submitters, closed,
//	       reapGen; cond changed (slots freed, a pass done, a Submit ended).
//
// Always sqMu before mu. Nobody waits for slots while holding sqMu, and a
// submitter told EAGAIN or EBUSY lets sqMu go while it waits for a reap, so
// a Done that submits is never stuck behind a waiting submitter. That wait
// is for the reaper's next pass (reapGen) only while the kernel holds
// operations of ours and the reaper is not running callbacks (inCallbacks):
// a Done told EAGAIN would otherwise wait for itself; it backs off instead.
// The test hooks (slotWait) run under mu. Completion fields are read under
// mu, so the reaper's critical section on the same slot comes after them in
// the race detector's eyes as it does in fact. inKernel (SQEs the kernel
// took minus CQEs reaped) is atomic: the submitter adds after enter returns,
// so it can dip below zero for a moment.
//
// The reaper waits for a CQE in io_uring_enter(GETEVENTS, min_complete=1)
// while the kernel holds operations of ours; with none, it parks on a Go
// channel that each submission signals, so completions that finish inside
// the submitting enter (page-cache reads, NOPs) arrive by a goroutine
// hand-off instead of a thread woken in the kernel. Config.ReapSpin (off by
// default) makes it poll the CQ ring for a while before it sleeps, trading
// CPU for the cost of that wake-up. Each pass copies out
// every CQE, advances the CQ head, frees the slots and broadcasts, and only
// then calls the Done callbacks, in CQE order. Close stops new Submits,
// waits until Submits in progress end and every slot is free, queues a NOP
// whose user_data is the sentinel ^0, waits for the reaper to see it (after
// the last Done has returned), unmaps the rings and closes the ring fd.
//
// The portable driver has one lock, mu, over a ring buffer of Entries
// queued operations (conds notEmpty, notFull). Workers pop whole chains;
// Submit blocks while the next chain does not fit.
//
// # Shared memory (io_uring)
//
// The SQ and CQ rings share one mapping when the kernel has
// IORING_FEAT_SINGLE_MMAP; the SQE array is a mapping of its own. Offsets
// come from io_uring_params at setup. The SQ array is filled once with the
// identity (array[i] = i), so the SQE at tail&mask is the one submitted.
//
//	SQ ring (mmap IORING_OFF_SQ_RING)          SQE array (IORING_OFF_SQES)
//	+-----------+ sq_off.head   kernel writes  +--------------------------+
//	| head  u32 |                              | 0: 64-byte io_uring_sqe  |
//	| tail  u32 | sq_off.tail   we write (rel) |   opcode flags ioprio fd |
//	| mask  u32 |                              |   off addr len op_flags  |
//	| entries   |                              |   user_data = slot index |
//	| flags u32 | IORING_SQ_CQ_OVERFLOW, ...   | 1: ...                   |
//	| dropped   |                              | sq_entries-1             |
//	| array[]   | u32 x sq_entries: i -> SQE i +--------------------------+
//	+-----------+
//
//	CQ ring (same mapping, or IORING_OFF_CQ_RING)
//	+-----------+ cq_off.head   we write (release) after copying CQEs out
//	| head  u32 |
//	| tail  u32 | cq_off.tail   kernel writes (release), we read (acquire)
//	| mask  u32 |
//	| entries   |
//	| overflow  | CQEs the kernel dropped: must stay 0
//	| cqes[]    | 16-byte io_uring_cqe x cq_entries: user_data u64, res s32, flags u32
//	+-----------+
//
//	iovec arena (anonymous mmap): slot s owns MaxIovecs struct iovec at
//	s*MaxIovecs*16; an OpWritev SQE points there.
//
// Submission: write SQEs at tail&mask, then store the tail (sync/atomic,
// sequentially consistent, at least the release the kernel's acquire
// pairs with), then io_uring_enter(to_submit = tail - head). Completion:
// load the CQ tail (acquire), copy CQEs head..tail, store the new head
// (release). Heads and tails are free-running uint32 counters.
//
// # Limits
//
// Entries (default 256, at most 32768) bounds operations in flight and the
// longest chain; MaxIovecs (64) bounds one writev; TransferBytesMax (1 GiB)
// bounds one transfer, so Res fits an int32 (the helpers split larger
// ones); Workers (default 4, at most 1024) bounds the portable pool.
package ring
