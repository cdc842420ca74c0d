// Package broker assembles one Felix broker from one Config: the data
// directory's lock and disk id, the IO driver, the engine with its streams,
// the cache store, the consumer groups, the idempotent producers, the
// client server (netio) and the admin HTTP server. `felix serve`, the e2e
// harnesses, the benches and the examples all start brokers here, so every
// test runs the production wiring, and one process can hold several
// brokers.
//
// Start opens the pieces in this order, and Stop closes them in the reverse:
//
//  1. the data directory's lock (datadir), then its disk id
//  2. the IO driver (ring), unless Config.FS supplies a file system
//  3. the admin server (answers /healthz at once, /readyz only at the end)
//  4. the engine (recovery of every stream), then the caches, the groups
//     and the producers over it
//  5. Config.Secure (authentication, quotas, TLS: what needs the engine)
//  6. the client server; then /readyz says ready
//
// Invariants: nothing reads or writes the data directory before its lock is
// held, and the lock is released last, after every file is closed; the
// servers stop (answering what is in flight) before the logs close; a Start
// that fails closes what it opened. The package never parses flags or reads
// the environment (cmd/felix does), and never installs signal handlers.
//
// A Broker's methods are safe for concurrent use; Stop may be called more
// than once.
package broker
