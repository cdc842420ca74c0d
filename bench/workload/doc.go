// Package workload is what `felix bench` runs: each workload drives one
// part of Felix the way its users do, measures it with package bench
// (HdrHistogram lanes, open- or closed-loop pacing, RunPipeline for
// requests kept in flight) and sets beside it the raw limit of the same
// path, measured in the same run on the same machine:
//
//	workload  drives                          beside it (raw limit)
//	fsync     the disk: fdatasync, group      (bare syscalls beside each
//	          commit, page cache; bare and    ring driver)
//	          through io_uring and portable
//	log       one shard log, in process       group commit (OnCommit) or
//	                                          page cache (None, Periodic)
//	pub       publish to a broker: records/s  TCP loopback request/answer of
//	          and ack latency                 the same shape; the disk's limit
//	e2e       publish -> delivery latency,    TCP echo of the same requests;
//	          1 or N subscribers              the disk's limit
//	cache     a mix of gets and puts on a     TCP loopback request/answer of
//	          broker's cache, N clients       each kind's frames; beside puts
//	                                          the disk's limit
//	group     poll and ack until drained,     one plain subscription draining
//	          1..N consumers, on a broker     the same records, same broker
//	matrix    pub over the standard shapes    (as pub), the fsync suite first
//
// CacheInProcess and GroupInProcess run the same cache mix and group
// drains on the engine alone, in this process (beside a bare log's
// appends and reads, and the engine's own subscription): set beside the
// broker's figures they tell how much of the cost is the engine's.
//
// Every workload takes a Spec (record size, batch, connections,
// publishers, subscribers, requests in flight, FsyncMode, duration or
// count, open-loop rate). Records and bytes are counted the same way in a
// workload and its baselines (a group-commit write of a 64-record batch is
// 64 records), so every ratio compares like with like. Open-loop runs
// measure latency from each request's intended send time.
//
// # What it must never do
//
//   - Report a figure without its raw limit: every RoleWorkload result
//     carries at least one baseline (package bench refuses it otherwise).
//   - Leave anything behind: streams it creates on a broker are deleted,
//     directories it makes under a data directory are removed, error or
//     not.
//   - Measure the disk anywhere but the directory given (the broker's own
//     data directory for pub, e2e and cache): /tmp may be a tmpfs.
//   - Run unbounded: every measurement has a duration or a count, every
//     Spec field a limit (ErrSpec), and a drain a timeout.
//
// # Goroutines and ownership
//
// A worker's sending goroutine owns its batch buffers (the client and the
// log copy records before Send returns); its awaiting goroutine owns its
// recorder lane. An e2e subscriber's goroutine owns its lane. A cache
// worker owns its key buffer, random state and its lane of each kind; a
// group consumer its offsets and its ack in flight. Baselines is shared
// by the workloads of a matrix under its own mutex.
package workload
