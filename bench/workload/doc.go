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
//	cache     put and get, in process         bare log append and read
//	group     poll and ack, in process        a plain subscription draining
//	                                          the same records
//	matrix    pub over the standard shapes    (as pub), the fsync suite first
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
//     data directory for pub and e2e): /tmp may be a tmpfs.
//   - Run unbounded: every measurement has a duration or a count, every
//     Spec field a limit (ErrSpec), and a drain a timeout.
//
// # Goroutines and ownership
//
// A worker's sending goroutine owns its batch buffers (the client and the
// log copy records before Send returns); its awaiting goroutine owns its
// recorder lane. An e2e subscriber's goroutine owns its lane. Baselines
// is shared by the workloads of a matrix under its own mutex.
package workload
