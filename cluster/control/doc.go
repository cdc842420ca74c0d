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
//     assignments: its engine.Ownership, the shards it should open, its
//     readiness and `felix cluster status`.
//   - Catalog: creating and deleting streams and caches, and waiting until
//     the control plane has placed them or said why not.
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
//     View.mu (read-locked by Local, Entry, Status, Changed; write-locked
//     by that goroutine for each batch of changes). Leader takes no lock:
//     after each batch the goroutine publishes an immutable index of the
//     answers (an atomic pointer), rebuilding only the objects the batch
//     touched, or all of them when a registration changed.
//   - Catalog starts no goroutine; a create's wait watches on the caller's.
//   - Lease watchdogs and waits run on the Clock's timers, which call back
//     without any of this package's locks held. Lock order: View.mu, then
//     the store's (the store never calls back into this package).
//
// Every goroutine ends when its component is closed; none outlives it.
package control
