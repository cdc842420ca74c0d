// Package sim is a deterministic, seeded simulation of a replicated Felix
// cluster, run inside a testing/synctest bubble (fake time). One seed
// (uint64) chooses the cluster's settings, the workload and the faults;
// the run is recorded in a check.Recorder and judged by check.Check.
//
// What runs for real: per broker, a cluster/replica.Node with its
// Leaders, Followers, fences, leases and truncation, over real
// engine/shardlog logs on a segment/vfs MemFS (crashed with its three
// modes), and the real cluster/failover machine as the control plane's
// lease and promotion logic. In a third of the seeds (Config.Engine, a
// draw of its own), the stream engine: each broker opens the real engine
// (package engine) on its MemFS over the run's catalog of the one
// stream (durable, replication factor 3, its shards' consistency and
// fsync one setting for all), with the broker's own adapter
// (cluster/replicated) over its node as its engine.Replication, so the
// stream's shards are the engine's (it opens their logs and the adapter
// holds them on the node) and take their roles as the broker's reconcile
// gives them (World.adapterRole: AssignRoles); the clients publish
// through engine.Stream.Publish, the server's publish path (one to three
// records under one routing key or none, so one shard's part: the shard
// is the key's, an unkeyed publish shard 0's), told on a PublishWaiter
// (each record's check.Ack carries the generation of the adapter's
// leadership the engine's append went to, Replicas.StreamLeader, and the
// lease the grants delivered say it held); they read a shard from offset 0 to its end through an engine
// subscription (UntilEnd), and two subscribers follow a shard each
// through a live subscription, resumed from the offset after the last
// record delivered once the broker restarted, the subscription ended or
// the client reconnects, and by one of them once the store names another
// leader; the other, as the cluster client does, stays at its broker
// across a failover (engine_workload.go, engine_subs.go). In another third of the seeds,
// independently, one or two replicated caches (one shard each, on all
// three brokers): each broker opens the real engine/cache store on its
// MemFS, its values and counters held through the same adapter over its
// node, which takes each cache shard's role as the broker's reconcile
// gives it; the clients put, put at the offset a get returned, get,
// delete, add to and read counters, each operation on a goroutine of its
// own, judged with check's KV and counter models. What is faked: the
// network (cluster/peer Network in Manual mode, delivered by this
// package), the disks (MemFS), the control plane's IO (a driver of the
// failover machine that runs on the simulator's goroutine over an
// in-memory table with an epoch guard, as cluster/replica's
// harness_control_test.go does, recording each stream shard's promotion
// as it begins for check's ack-after-promotion), the broker's view of the store (a table
// per broker, one changed shard a step), the client connections (the
// simulated clients call the engine where the server would: no netio, no
// forwarding of a publish another broker leads, which is refused as not
// led), the stream's clients outside an engine run (the simulator appends
// at a Leader and reads its committed log), and time. Not run: a publish
// split over shards (the PublishWaiter tells once for all parts, so a
// part's acknowledgement time, which the lease check reads, is not seen),
// the groups and the idempotent producers.
//
// Invariants:
//   - Everything the brokers say to each other and to the control plane
//     goes through the Network's queue, and only the simulator's goroutine
//     delivers it, in an order drawn from the seed among the messages due,
//     after synctest.Wait (every broker goroutine blocked): the set of
//     messages the simulator chooses from is then a function of the seed.
//   - The control plane's machine, the store table and the workload are
//     touched only by the simulator's goroutine; what transport goroutines
//     hand it (a fence's outcome, an append's or an engine publish's
//     acknowledgement, a cache operation's answer) waits in a
//     mutex-guarded inbox drained, sorted, after synctest.Wait.
//   - An engine publish is made on the simulator's goroutine (the
//     engine's Publish never waits but for a full write buffer, which a
//     run's few records never fill), followed by synctest.Wait; an engine
//     subscription is read there too, with an already cancelled context
//     (Next then returns what is queued, or the history it catches up on,
//     and never waits), so what one read delivers is what the shard's
//     leadership had handed the subscription (its OnCommit, on the
//     leader's goroutine, which the Wait before saw blocked), not what
//     the scheduler had run by then. The engine starts no goroutine of its
//     own for a replicated shard (no healer, no flush scheduler): its
//     committers and flushers are the logs' and the leaderships', as
//     without it.
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
