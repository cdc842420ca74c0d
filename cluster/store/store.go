package store

import (
	"context"
	"time"
)

// Store is what the control plane needs from its store. Every method is
// safe to call from any goroutine. Reads are linearizable: they see every
// write that returned before they began.
type Store interface {
	// Get reads one key. An absent key is the zero KV (Exists reports false);
	// the revision is the store's at the read.
	Get(ctx context.Context, key string) (KV, int64, error)
	// Range reads every key that starts with prefix, in key order, and the
	// store's revision at the read (watch from that revision + 1 to miss
	// nothing). An empty prefix reads every key.
	Range(ctx context.Context, prefix string) ([]KV, int64, error)
	// Txn applies txn.Then if every comparison in txn.If holds, all of it
	// or none. A comparison that fails is not an error: the result says
	// Succeeded false, with the store's current revision.
	Txn(ctx context.Context, txn Txn) (TxnResult, error)
	// Compact discards the history before rev; watches from below rev end
	// with ErrCompacted. rev at or below the last compaction is
	// ErrCompacted, above the current revision ErrFutureRevision.
	Compact(ctx context.Context, rev int64) error

	// Grant makes a lease of at least ttl (rounded up to whole seconds, and
	// to etcd's minimum); the result says what was granted.
	Grant(ctx context.Context, ttl time.Duration) (Lease, error)
	// KeepAlive renews the lease once, for its full TTL from now, and
	// returns that TTL. A lease that has expired is ErrLeaseNotFound.
	KeepAlive(ctx context.Context, id LeaseID) (time.Duration, error)
	// Revoke ends the lease now and deletes every key attached to it, in
	// one revision.
	Revoke(ctx context.Context, id LeaseID) error

	// Watch starts delivering, in revision order, every put and delete of a
	// key under prefix at revision fromRev or above (fromRev >= 1). ctx
	// bounds the watch's whole life; Close ends it sooner.
	Watch(ctx context.Context, prefix string, fromRev int64) (Watch, error)

	// Campaign puts this candidate's key (election/<lease in hex>, attached
	// to lease, holding value) and waits until it is the oldest key of the
	// election: then it leads, and the key's create revision is its epoch.
	// A ctx done while waiting withdraws the candidate. The lease must be
	// kept alive by the caller; when it expires the key goes and so does
	// the leadership.
	Campaign(ctx context.Context, election string, lease LeaseID, value []byte) (*Leadership, error)

	// Close releases the store. Operations after it return ErrClosed (or a
	// transport error that wraps it); Close is safe to call twice.
	Close() error
}

// KV is one key's state at a revision. The zero KV is an absent key.
type KV struct {
	Key            string
	Value          []byte
	CreateRevision int64 // the revision that created it (0: absent)
	ModRevision    int64 // the revision of its last put (or, in a delete event, of the delete)
	Version        int64 // puts since it was created, 1 for the first
	Lease          LeaseID
}

// Exists reports whether the key was present.
func (kv KV) Exists() bool { return kv.CreateRevision != 0 }

// LeaseID names a lease. NoLease attaches a key to none.
type LeaseID int64

// NoLease is the LeaseID of a key attached to no lease.
const NoLease LeaseID = 0

// Lease is a granted lease: its id and the TTL the store granted.
type Lease struct {
	ID  LeaseID
	TTL time.Duration
}

// EventKind says whether an event put or deleted its key.
type EventKind uint8

const (
	// EventPut: the key was created or overwritten; KV is its new state.
	EventPut EventKind = iota + 1
	// EventDelete: the key was deleted (by a delete, or its lease ending);
	// KV holds only Key and ModRevision, the revision of the delete.
	EventDelete
)

func (k EventKind) String() string {
	switch k {
	case EventPut:
		return "put"
	case EventDelete:
		return "delete"
	}
	return "unknown"
}

// Event is one change a Watch delivers.
type Event struct {
	Kind EventKind
	KV   KV
}

// Revision is the revision that made the change.
func (e Event) Revision() int64 { return e.KV.ModRevision }

// Watch delivers a prefix's changes. Next is called from one goroutine at a
// time; Close from any, once or more.
type Watch interface {
	// Next blocks until at least one event is there or ctx is done, and
	// returns the events in revision order, every event of a revision in
	// one batch. The caller owns the slice. A done ctx returns its error
	// and leaves the watch going. Any other error ends the watch (every
	// later Next returns it): ErrCompacted when the watch fell behind a
	// compaction, ErrClosed when it or its store was closed, the error of
	// the ctx given to Watch when that is done.
	Next(ctx context.Context) ([]Event, error)
	Close()
}
