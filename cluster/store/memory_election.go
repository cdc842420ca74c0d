package store

import (
	"bytes"
	"context"
	"fmt"
	"strings"
)

// Campaign implements Store, as client/v3 concurrency's Election does: put
// the candidate key if it is absent (a candidate campaigning again keeps
// its key and epoch, with the new value), then wait until no key of the
// election is older.
func (s *Memory) Campaign(ctx context.Context, election string, lease LeaseID, value []byte) (*Leadership, error) {
	if err := validElection(election, lease); err != nil {
		return nil, err
	}
	key := candidateKey(election, lease)
	epoch, err := enterElection(ctx, s, key, lease, value)
	if err != nil {
		return nil, err
	}
	for {
		won, changed, err := s.campaignState(election, key, epoch)
		if err != nil || won {
			if err != nil {
				return nil, err
			}
			return newLeadership(s, key, epoch, lease), nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			withdraw(s, key, epoch)
			return nil, ctx.Err()
		}
	}
}

// enterElection puts the candidate key and returns its create revision.
func enterElection(ctx context.Context, s Store, key string, lease LeaseID, value []byte) (int64, error) {
	res, err := s.Txn(ctx, Txn{If: []Cmp{Absent(key)}, Then: []Op{PutWithLease(key, value, lease)}})
	if err != nil || res.Succeeded {
		return res.Revision, err
	}
	kv, _, err := s.Get(ctx, key)
	if err != nil {
		return 0, err
	}
	if !kv.Exists() {
		return 0, fmt.Errorf("%w: candidate key %q went while campaigning", ErrNotLeader, key)
	}
	if bytes.Equal(kv.Value, value) {
		return kv.CreateRevision, nil
	}
	res, err = s.Txn(ctx, Txn{If: []Cmp{LeaderGuard(key, kv.CreateRevision)}, Then: []Op{PutWithLease(key, value, lease)}})
	if err == nil && !res.Succeeded {
		err = fmt.Errorf("%w: candidate key %q went while campaigning", ErrNotLeader, key)
	}
	return kv.CreateRevision, err
}

// withdraw deletes a candidate key that is still this candidate's.
func withdraw(s Store, key string, epoch int64) {
	// The caller's ctx is done; the delete is in memory and cannot block.
	_, _ = s.Txn(context.Background(), Txn{If: []Cmp{LeaderGuard(key, epoch)}, Then: []Op{Delete(key)}})
}

// campaignState says whether the candidate has won: no older key is
// left. A candidate whose own key went (its lease ended) has lost, which it
// learns once no older key is left, as with etcd.
func (s *Memory) campaignState(election, key string, epoch int64) (bool, <-chan struct{}, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.beginLocked(context.Background()); err != nil {
		return false, nil, err
	}
	prefix := electionPrefix(election)
	for k, kv := range s.keys {
		if strings.HasPrefix(k, prefix) && kv.CreateRevision < epoch {
			return false, s.changed, nil
		}
	}
	if s.keys[key].CreateRevision != epoch {
		return false, nil, fmt.Errorf("%w: candidate key %q went while campaigning", ErrNotLeader, key)
	}
	return true, nil, nil
}
