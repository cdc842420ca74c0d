// Package store is the control plane's store: the small interface (Store)
// over what Felix's control plane needs from etcd, and its two
// implementations, which pass one contract suite (contract_test.go):
//
//   - Etcd, on go.etcd.io/etcd v3.7.3: StartEmbedded runs a member in this
//     process (a cluster of one under the broker's data directory, or one
//     member of a cluster of several given the initial cluster map), and
//     Dial connects to an external cluster (--etcd-endpoints);
//   - Memory, the same semantics in one process, deterministic, with time
//     from a Clock: for tests and for the simulator, since an embedded etcd
//     cannot run inside a testing/synctest bubble.
//
// What the store offers:
//
//	Get, Range        linearizable reads, with the store's revision
//	Txn               compare (mod revision, create revision, value,
//	                  presence) then puts and deletes, all or nothing, in one
//	                  revision; a failed compare is Succeeded false, no error
//	Grant, KeepAlive, leases: a key put with a lease is deleted when the
//	Revoke            lease is revoked or expires (TTLs in whole seconds)
//	Watch             a prefix's puts and deletes from a revision, in order
//	Compact           discards history; a watch from below it errs
//	Campaign          an election under a lease; the Leadership it returns
//	                  guards writes with its epoch (Leader, Observe follow it)
//
// # What it must never do
//
// It holds no broker logic: it knows keys, revisions, leases and one
// election, never streams, shards or brokers; the control plane (package
// cluster) decides what to write. It never makes a write without its guard
// when the caller asks for one: Leadership.Txn sends the guard in the same
// transaction as the write (If CreateRevision(election key) == epoch), so a
// deposed control plane's write is refused by the store itself, however
// late it arrives; it never checks first and writes after.
//
// # Invariants
//
//   - Revisions only rise. A write makes exactly one new revision (a txn
//     that changes nothing, a failed compare, and a read make none), and
//     every result and read carries a revision no lower than any before it.
//   - A key's create revision names one incarnation of it: a key deleted
//     and put again has a new one. So the guard "the election key has
//     create revision R" holds while that leader leads and never again, and
//     the epoch R of a later leader is always higher.
//   - A watch delivers every event at or after its start revision, in
//     revision order, all of a revision in one batch, or ends with an
//     error: ErrCompacted when the history it needs is gone, never by
//     silently skipping. A watch on etcd also ends when its member loses
//     the cluster's leader, instead of going quiet (etcd checks that in
//     its gRPC layer only, so the store of an embedded member of several
//     talks gRPC to its own member; a cluster of one uses an in-process
//     client, and has no leader to lose).
//   - A lease's keys all go in one revision, in key order, when it ends.
//     The in-memory store expires a lease when its Clock reaches the
//     deadline (every operation checks first, so expiry depends on the
//     clock alone); etcd's leader does so within half a second, and
//     refreshes every lease when its own leadership changes. So a holder
//     must count its lease from the keepalive it sent, never from etcd.
//   - A Campaign does not renew its lease (except that etcd's session
//     setup sends one keepalive); the caller keeps it alive, and a lease
//     that ends deposes its leader.
//
// # Goroutines and locks
//
// Every Store method is safe for concurrent use. A Watch's Next is called
// from one goroutine at a time, its Close from any; a Leadership's methods
// from any. Memory has one mutex over all its state and starts no
// goroutine: a watch reads the shared history from its own cursor, and
// waiters (Next, Campaign) wait on a channel closed at every new revision.
// Its lease timers come from its Clock: time.AfterFunc for SystemClock
// (inside a synctest bubble, the bubble's clock), the goroutine calling
// Advance for ManualClock. Lock order: Memory.mu, then ManualClock.mu;
// ManualClock runs timers with its own lock released. Etcd's goroutines
// are client/v3's (a watch's stream, the keepalive of a campaign session,
// which is stopped at once) and, for an embedded member, etcd's own; Close
// closes the client before the member, since the member's Close otherwise
// waits seconds for the client's streams, and closes the member once.
package store
