// Package sim is a deterministic, seeded simulation of a replicated Felix
// cluster, run inside a testing/synctest bubble (fake time). One seed
// (uint64) chooses the cluster's settings, the workload and the faults;
// the run is recorded in a check.Recorder and judged by check.Check.
//
// What runs for real: per broker, a cluster/replica.Node with its
// Leaders, Followers, fences, leases and truncation, over real
// engine/shardlog logs on a segment/vfs MemFS (crashed with its three
// modes), and the real cluster/failover machine as the control plane's
// lease and promotion logic. In a third of the seeds, one or two
// replicated caches (one shard each, on all three brokers): each broker
// opens the real engine/cache store on its MemFS, its values and counters
// held through the broker's own adapter (cluster/replicated) over its
// node, which takes each cache shard's role as the broker's reconcile
// gives it (World.cacheRole); the clients put, put at the offset a get
// returned, get, delete, add to and read counters, each operation on a
// goroutine of its own, judged with check's KV and counter models. What
// is faked: the network (cluster/peer Network in Manual mode, delivered
// by this package), the disks (MemFS), the control plane's IO (a driver
// of the failover machine that runs on the simulator's goroutine over an
// in-memory table with an epoch guard, as cluster/replica's
// harness_control_test.go does), the broker's view of the store (a table
// per broker, one changed shard a step), the stream's clients (the
// simulator appends at a Leader and reads its committed log: the stream
// engine's publish path, groups and producers do not run), and time.
//
// Invariants:
//   - Everything the brokers say to each other and to the control plane
//     goes through the Network's queue, and only the simulator's goroutine
//     delivers it, in an order drawn from the seed among the messages due,
//     after synctest.Wait (every broker goroutine blocked): the set of
//     messages the simulator chooses from is then a function of the seed.
//   - The control plane's machine, the store table and the workload are
//     touched only by the simulator's goroutine; what transport goroutines
//     hand it (a fence's outcome, an append's acknowledgement, a cache
//     operation's answer) waits in a mutex-guarded inbox drained, sorted,
//     after synctest.Wait.
//   - A cache operation starts on its goroutine only when every other one
//     waits, and the simulator waits again before it goes on; one such
//     goroutine at a time is inside a broker's cache's methods (a channel,
//     broker.cacheCalls: one waiting on the shard's writer lock while
//     another holds it across a gated sync would not be durably blocked,
//     and synctest.Wait would never return); a cache's
//     Part.Appended (which wakes its leadership's shipping) is queued and
//     called by the simulator's goroutine after synctest.Wait, in a fixed
//     order, so the shipping never races the log's committer.
//   - A broker's timers meet no step and no other goroutine's timer,
//     where synctest would wake both together in no fixed order: brokers
//     start a step apart, a broker learns one changed assignment a step,
//     a heartbeat gives up a nanosecond short of its next tick
//     (replica.NodeConfig.HeartbeatTimeout), and a broker's secondary
//     parts fence and lead a fraction of a step after their primary leads
//     or their adoption ends, a fraction of its own (PartLeadDelay).
//   - Every load is bounded: operations per run (opsMax, cacheOpsMax), fake
//     time per run (Config.Duration), messages delivered per instant
//     (deliveriesPerStepMax).
//
// It must never read a wall clock, sleep outside the bubble, or use a
// random source other than the seed's.
//
// Lock order: World.mu (acks, leases seen) is a leaf; inbox.mu,
// appendedQueue.mu and brokerView.mu are leaves.
package sim
