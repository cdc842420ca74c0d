// Package control is the control plane's thin driver and a broker's view
// of it: the IO around the pure placement Machine (package cluster), over
// the store (package cluster/store). It holds no placement logic: what to
// write is the Machine's; this package reads, watches, writes under
// guards, and keeps leases alive.
//
//   - Register: a broker's registration, under a lease it keeps alive
//     (renewed every TTL/3, counted from the renewal it sent), registered
//     again under a new lease when the old one is lost, revoked at Stop.
//   - Controller: a candidacy for the control plane. While it leads (its
//     epoch is its election key's create revision) it drives a Machine as
//     cluster/doc.go lists the caller's duties; deposed, or its lease
//     lost, it stops and campaigns again.
//   - View: a broker's view of the brokers, the catalog and the
//     assignments: its engine.Ownership (Leader) and engine.Placement
//     (Holds: the shards whose replica it holds, placed for the catalog's
//     incarnation), the routing's LeaderBroker and the peer transport's
//     PeerAddr, the shards it should open, its readiness and `felix
//     cluster status`. AwaitObject waits until it holds an object (and,
//     asked, its placement): it waits on what the view holds, never on a
//     store revision, as the store sends no progress notifications and a
//     revision of a write outside Root might never reach it.
//   - Catalog: creating and deleting streams and caches, and waiting until
//     the control plane has placed them or said why not.
//   - StreamCatalog, CacheCatalog: the engine's and the cache store's
//     catalogs (engine.Catalog, cache.Catalog) kept in the store, for a
//     broker in a cluster. Get and List read the View (Generation is shard
//     0's assignment's, the engine's leader epoch). Create and Delete
//     write through a Catalog and return once this broker's View has seen
//     the object placed, or gone, so Holds, asked next, answers for it;
//     each call is bounded by one wait (the interfaces take no context). A
//     create that wrote the entry but saw it not placed answers
//     ErrCreatedNotPlaced, matching why (cluster.ErrTooFewBrokers,
//     ErrNotPlaced); it is not undone: the entry stays, and is placed once
//     the cluster can.
//   - Migrate: a broker's file catalogs into the store's (below).
//
// # Keys (format 1)
//
// Everything lives under Root, "felix/v1/": the prefix is the format's
// version, so a later format is another prefix beside it, and one Range of
// Root reads the whole state at one revision. The parts of a name are
// those engine.CheckName allows (no '/'); a shard is four decimal digits,
// so key order is shard order. Values are JSON (testdata/*.json); fields
// may be added within the format and readers ignore what they do not
// know. Frozen.
//
//	key under felix/v1/                          value (JSON)                           written by, how
//	-------------------------------------------  -------------------------------------  -----------------------------------
//	brokers/<broker>                             {id, client_addr, peer_addr,           the broker (Register), under its
//	                                              rack, disk_id}                        lease; gone when the lease ends
//	catalog/<kind>/<tenant>/<namespace>/<name>   {stream|cache: config, created}        a creator (Catalog), only if absent;
//	                                                                                    its create revision is the object's
//	                                                                                    Incarnation
//	placement/<kind>/<t>/<ns>/<name>/shards/NNNN {replicas: [{broker, disk_id}],        the control plane, compare-and-swap
//	                                              leader?, generation, incarnation,     on the key's mod revision AND the
//	                                              epoch}                                epoch guard
//	placement/<kind>/<t>/<ns>/<name>/unplaced    {needed, live, incarnation, epoch}     the control plane, epoch-guarded and
//	                                                                                    only while the catalog key has that
//	                                                                                    incarnation; the deleter removes it
//	election/<lease in hex>                      the candidate broker's id               store.Campaign, under the
//	                                                                                    candidate's lease
//
// <kind> is "stream" or "cache"; an assignment's leader is absent while no
// replica leads (promotion writes a generation before it names a leader);
// epoch is the election revision of the control plane that wrote it.
//
// # Migration
//
// A broker that ran alone keeps its catalogs in files (engine.FileCatalog's
// <data>/catalog.json, cache.FileCatalog's <data>/caches/catalog.json).
// Joining a cluster, it (package broker) reads them, calls Migrate, and
// only once Migrate returns nil renames each file to catalog.json.migrated.
// Migrate writes each entry only where its name is absent, keeping its
// config and Created; an entry already there with the same config counts
// as present. So a crash between the two steps, or during Migrate, is
// answered by migrating again at the next start: what was written is
// found present, the rest is written. An entry there with another config
// is never overwritten (ErrConflict names it) and the files stay where
// they are for an operator to settle. Migrate does not wait for
// placement: the control plane places the entries as any others, and the
// engine opens the shards Holds says are its own.
//
// # Invariants
//
//   - Every write of the control plane carries its epoch guard in the same
//     txn (store.Leadership.Txn): a deposed control plane's write is
//     refused by the store, however late it arrives.
//   - A write whose compare failed is never retried as it was: the Machine
//     resyncs (a Range of Root at R, then a watch from R+1).
//   - What cannot be read is never acted on: a malformed registration is a
//     broker not live; an object whose catalog entry or any assignment is
//     malformed is left alone by the control plane, with its assignments,
//     and logged (placing around it could overwrite another writer's
//     intent). A View leaves such keys out.
//   - A lease is counted from the send of the last renewal that succeeded:
//     a holder stops counting on it one TTL after that, whether or not a
//     renewal is still waiting for its answer.
//
// # Goroutines and locks
//
//   - Registration: one goroutine, renewing and registering again; Stop
//     ends it, then revokes.
//   - Controller: one goroutine running the terms; during each term one
//     more holds the term's lease. A term's driver owns its Machine and
//     reads its watch on the run goroutine; it sends the writes of one
//     batch of actions on up to writesInFlightMax short-lived goroutines
//     and waits for all of them before it steps their outcomes. Close
//     cancels, waits for both, and revokes the term's lease.
//   - View: one goroutine reading and watching. Its state is guarded by
//     View.mu (read-locked by Local, Entry, Status, Changed, PeerAddr,
//     AwaitObject's checks and the store-backed catalogs' reads;
//     write-locked by that goroutine for each batch of changes). Leader,
//     Holds and LeaderBroker take no lock and allocate nothing: after each
//     batch the goroutine publishes an immutable index of the answers (an
//     atomic pointer), under the same write lock as the state it indexes,
//     rebuilding only the objects whose assignments or catalog entry the
//     batch touched, or all of them when a registration changed.
//   - Catalog, StreamCatalog and CacheCatalog start no goroutine; a
//     create's wait watches on the caller's, and a wait on the View reads
//     it on the caller's, woken by Changed.
//   - Lease watchdogs and waits run on the Clock's timers, which call back
//     without any of this package's locks held. Lock order: View.mu, then
//     the store's (the store never calls back into this package).
//
// Every goroutine ends when its component is closed; none outlives it.
package control
