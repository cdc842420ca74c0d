// Package broker assembles one Felix broker from one Config: the data
// directory's lock and disk id, the IO driver, the engine with its streams,
// the cache store, the consumer groups, the idempotent producers, the
// client server (netio) and the admin HTTP server, and with
// Config.Cluster its part in a cluster. `felix serve`, the e2e harnesses,
// the benches and the examples all start brokers here, so every test runs
// the production wiring, and one process can hold several brokers.
//
// Start opens the pieces in this order, and Stop closes them in the reverse:
//
//  1. the data directory's lock (datadir), then its disk id
//  2. the IO driver (ring), unless Config.FS supplies a file system
//  3. the admin server (answers /healthz at once, /readyz only at the end)
//  4. with Config.Cluster: the control plane's store (given, dialled or an
//     embedded etcd member), the View (Start waits until it has read the
//     store once), the peer listener and the forwarder over it, the
//     catalogs in the store, and the migration of a data directory that
//     ran alone (its catalog.json files into the store)
//  5. the engine (recovery of every stream; in a cluster only the shards
//     placed here), then the caches, the groups and the producers over it
//  6. Config.Secure (authentication, quotas, TLS: what needs the engine)
//  7. the client server (in a cluster also the handler of the peers'
//     requests)
//  8. with Config.Cluster: the registration, a control plane candidacy and
//     the reconcile loop (its first round on Start's goroutine); then
//     /readyz says ready
//
// Stop ends the reconcile loop first, then closes the rest in reverse:
// the client server, the peer listener, the candidacy, the registration
// (revoked, so the others see the broker gone at once), the managers, the
// engine, the View, the store (a given one is the caller's), the admin
// server, the driver, the lock.
//
// # A broker in a cluster
//
// The cluster's View is the one source of ownership and placement (the
// engine's, the caches', the server's redirects; Config.Owner must then be
// nil); the catalogs live in the store. At every change the View sees,
// the reconcile loop calls Engine.Reconcile then cache.Store.Reconcile,
// which open the shards newly placed here and close those that left; a
// round that fails is tried again at the next change or after a backoff.
// /readyz is ready once the View has read the store, the broker is
// registered and a round has succeeded, and says why not otherwise.
//
// A data directory that ran alone keeps its catalogs in files; at its
// first start in a cluster they are written into the store
// (control.Migrate), then renamed catalog.json.migrated: a crash in
// between migrates again, harmlessly. The control plane places the
// migrated objects like any create, and Start waits for that before its
// first reconcile. In a cluster of one (the default `felix serve`) every
// shard is placed on the only broker, so its records stay served;
// migrating into a cluster of several does not (yet) place a shard on the
// broker that has its data.
//
// Invariants: nothing reads or writes the data directory before its lock is
// held, and the lock is released last, after every file is closed; the
// servers stop (answering what is in flight) before the logs close; a Start
// that fails closes what it opened. The package never parses flags or reads
// the environment (cmd/felix does), and never installs signal handlers.
//
// For tests only, ClusterConfig.AckJournal (`felix serve` reads it from
// FELIX_ACK_JOURNAL) journals every acknowledgement the broker's
// leaderships send and every promotion its control plane begins, one JSON
// line each with CLOCK_MONOTONIC times, to a file of the process's own
// (ack_journal_entry.go has the format, ReadAckJournal reads it): the
// real-process nemeses feed them to the history checker. It is opened
// first and closed last; unset, the hooks are nil and cost nothing.
//
// A Broker's methods are safe for concurrent use; Stop may be called more
// than once.
package broker
