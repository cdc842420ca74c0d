package store

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// Campaign implements Store with client/v3 concurrency's Election, on a
// Session over the caller's lease. The session is orphaned at once: it
// would otherwise keep the lease alive on its own, and it is the caller
// that decides when the lease is renewed (setting the session up sends
// one keepalive).
func (s *Etcd) Campaign(ctx context.Context, election string, lease LeaseID, value []byte) (*Leadership, error) {
	if err := validElection(election, lease); err != nil {
		return nil, err
	}
	session, err := concurrency.NewSession(s.client, concurrency.WithLease(clientv3.LeaseID(lease)))
	if err != nil {
		return nil, s.fail("campaign session", err)
	}
	session.Orphan()
	e := concurrency.NewElection(session, election)
	if err := e.Campaign(ctx, string(value)); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, s.fail("campaign", err)
	}
	return s.confirmCampaign(ctx, e.Key(), e.Rev(), lease)
}

// confirmCampaign checks the won key is still there: concurrency's
// Campaign returns once the older keys are gone, even if its own went too
// (its lease ended while it waited).
func (s *Etcd) confirmCampaign(ctx context.Context, key string, epoch int64, lease LeaseID) (*Leadership, error) {
	kv, _, err := s.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	if kv.CreateRevision != epoch {
		return nil, fmt.Errorf("%w: candidate key %q went while campaigning", ErrNotLeader, key)
	}
	return newLeadership(s, key, epoch, lease), nil
}
