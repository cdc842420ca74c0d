package control

import (
	"context"
	"errors"

	"github.com/felixbroker/felix/cluster/store"
)

// A controller campaigns only when the control plane's election has no
// candidate, and withdraws at once when it meets another at that vacancy
// and is not the oldest: no candidate waits in line. A candidate in line
// under a lease of its own would lead next whether or not its broker still
// lives, and a broker killed while in line leaves its key there for its
// lease's TTL, extended by etcd's election timeout when etcd's raft leader
// changes (etcd's lessor Promote): a control plane lost within that window
// made the cluster wait for a dead broker's candidacy (up to 3.5 s in the
// kill nemesis at L = 1 s) before a live one could lead.

// errLostRace: another candidate's key, older than this one's, leads.
var errLostRace = errors.New("felix/cluster/control: another candidate campaigned first")

// awaitVacancy returns once the election has no candidate.
func (c *Controller) awaitVacancy(ctx context.Context) error {
	return c.followElection(ctx, func(keys map[string]store.KV) bool { return len(keys) == 0 })
}

// watchRace returns errLostRace once the key of this candidate's lease is
// in the election and another's is older; nil if ctx ends first.
func (c *Controller) watchRace(ctx context.Context, lease store.LeaseID) error {
	err := c.followElection(ctx, func(keys map[string]store.KV) bool {
		var ours, oldest store.KV
		for _, kv := range keys {
			if kv.Lease == lease {
				ours = kv
			}
			if !oldest.Exists() || kv.CreateRevision < oldest.CreateRevision {
				oldest = kv
			}
		}
		return ours.Exists() && oldest.Lease != lease
	})
	if err == nil {
		return errLostRace
	}
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// followElection reads the election's keys, then watches them from that
// revision, until done says so of them (nil), ctx ends or the store
// fails (its error); a watch behind a compaction reads them again.
func (c *Controller) followElection(ctx context.Context, done func(keys map[string]store.KV) bool) error {
	for {
		err := c.followElectionFromRead(ctx, done)
		if !errors.Is(err, store.ErrCompacted) {
			return err
		}
	}
}

func (c *Controller) followElectionFromRead(ctx context.Context, done func(keys map[string]store.KV) bool) error {
	keys := map[string]store.KV{}
	read := func(kvs []store.KV, _ int64) bool {
		for _, kv := range kvs {
			keys[kv.Key] = kv
		}
		return done(keys)
	}
	apply := func(events []store.Event) bool {
		for _, ev := range events {
			if ev.Kind == store.EventDelete {
				delete(keys, ev.KV.Key)
			} else {
				keys[ev.KV.Key] = ev.KV
			}
		}
		return done(keys)
	}
	return followPrefix(ctx, c.cfg.Store, electionDir, read, apply)
}
