package store

import "errors"

// Errors a caller can test with errors.Is. Both implementations return
// these, wrapped with detail; anything else is an error of the transport
// (etcd unreachable, a context done) and says so.
var (
	// ErrCompacted: the revision asked for (a watch's start, a compaction's
	// target) lies at or below the store's compaction point. A watch that
	// ends with it has delivered everything before the gap and nothing after:
	// read the state afresh and watch again from there.
	ErrCompacted = errors.New("felix/cluster/store: revision compacted")
	// ErrFutureRevision: a compaction asked for a revision not yet written.
	ErrFutureRevision = errors.New("felix/cluster/store: revision not yet written")
	// ErrLeaseNotFound: the lease was never granted, was revoked or has
	// expired (the store cannot tell these apart, and neither may a caller).
	ErrLeaseNotFound = errors.New("felix/cluster/store: lease not found (expired or revoked)")
	// ErrNotLeader: a Leadership that resigned, or whose election key no
	// longer has the create revision it won with (deposed). A write it
	// guards was not made.
	ErrNotLeader = errors.New("felix/cluster/store: not the leader (resigned or deposed)")
	// ErrNoLeader: an election has no candidate.
	ErrNoLeader = errors.New("felix/cluster/store: election has no leader")
	// ErrInvalid: a request the store refuses before doing anything (an
	// empty key, a key written twice in one txn, a bound exceeded).
	ErrInvalid = errors.New("felix/cluster/store: invalid request")
	// ErrUnavailable: the store could not answer for now (etcd lost or is
	// changing its raft leader, or timed out a proposal). A write that fails
	// with it may or may not have been applied: a caller that retries
	// reads first, or writes under a compare that tells the two apart.
	ErrUnavailable = errors.New("felix/cluster/store: unavailable for now (a write may or may not have been applied)")
	// ErrClosed: the store (or the watch) was closed.
	ErrClosed = errors.New("felix/cluster/store: closed")
)
