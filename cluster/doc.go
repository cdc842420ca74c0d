// Package cluster will hold Felix's cluster layer: the control plane (state
// in etcd), shard leases and generations, replication, routing between
// brokers (forward publishes and cache operations, redirect subscribes and
// group polls) and failover. It is not built yet: Felix runs as one broker,
// and this package has no code.
//
// The single-broker code already leaves the seams this layer needs
// (../shared/CLUSTER.md is the plan):
//
//   - records carry the generation that wrote them; engine/shardlog can
//     report where a generation ends (GenerationEnd), truncate (Truncate)
//     and refuse an append at a lower generation;
//   - the stream and cache catalogs sit behind interfaces (engine.Catalog,
//     cache.Catalog) a control plane can implement;
//   - every operation only a shard's leader may serve asks one ownership
//     function first (engine.Ownership), and a waiting group poll asks again;
//   - a request's credential travels with it, so an owner can verify it
//     again (see auth and netio).
//
// It must never promote a replica that lacks a record the leader
// acknowledged, never acknowledge past its lease, and never read a wall
// clock for a lease.
package cluster
