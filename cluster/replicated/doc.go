// Package replicated is the adapter between a broker's engine (its
// streams, their groups, its caches) and the broker's cluster/replica.Node:
// it implements engine.Replication and engine.PartReplication over the
// node, and gives each replicated shard held here the role the cluster's
// view assigns it. The broker wires it over its control.View; the
// simulator (package sim) over its own table of assignments, so both run
// this one code.
//
// Who calls what, in order:
//
//  1. New, once the replica.Node exists (the caller made it, and owns its
//     transport and its heartbeats' control plane).
//  2. The engine, the groups and the caches open their shards and hand
//     them over: Replicate (a stream shard's records), HoldPart (a stream
//     shard's group logs, a cache shard's values and counters). A cache
//     shard's primary takes its role at once, if the view names one.
//  3. AssignRoles after every change of the view (a reconcile step, after
//     the engine and the caches reconciled): each shard held here leads,
//     at the generation its assignment names, where this broker is its
//     leader, and follows otherwise.
//  4. Close: every leadership ends, the node stops.
//
// It must never lead a shard at a generation its view does not name for
// this broker, never serve a read past what is committed (a follower's
// reads stop at the commit its leader last told it), and never block the
// node's goroutines: OnCommit callbacks go straight to their owner.
//
// Invariants: a replicated stream shard is in Replicas.shards from
// Replicate until its Close; a cache primary is in Replicas.external from
// HoldPart until its Release; a shard leads only through assign (stream)
// or assignExternal (cache), at the view's generation.
//
// Locks: Replicas.mu is a leaf, never held across a call into the node,
// the view or an owner's callback.
package replicated
