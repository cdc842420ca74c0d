package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
)

// electionPrefix is the prefix under which an election's candidates put
// their keys (client/v3 concurrency's layout, so both implementations and
// etcd tools agree).
func electionPrefix(election string) string { return election + "/" }

// candidateKey is the key a candidate campaigns with.
func candidateKey(election string, lease LeaseID) string {
	return fmt.Sprintf("%s%x", electionPrefix(election), int64(lease))
}

func validElection(election string, lease LeaseID) error {
	if election == "" {
		return fmt.Errorf("%w: an empty election name", ErrInvalid)
	}
	if lease == NoLease {
		return fmt.Errorf("%w: a campaign needs a lease", ErrInvalid)
	}
	return validKey(candidateKey(election, lease))
}

// Leader reads the election's leader: the candidate key with the lowest
// create revision. No candidate is ErrNoLeader.
func Leader(ctx context.Context, s Store, election string) (KV, error) {
	kvs, _, err := s.Range(ctx, electionPrefix(election))
	if err != nil {
		return KV{}, err
	}
	if len(kvs) == 0 {
		return KV{}, fmt.Errorf("%w: election %q", ErrNoLeader, election)
	}
	return oldest(kvs), nil
}

func oldest(kvs []KV) KV {
	return slices.MinFunc(kvs, func(a, b KV) int { return cmp.Compare(a.CreateRevision, b.CreateRevision) })
}

// LeaderGuard is the comparison "the election key still has create
// revision epoch": it holds while that candidate leads, and never again
// once its key is gone, since a key put again gets a new create revision.
func LeaderGuard(key string, epoch int64) Cmp { return CreateRevisionIs(key, epoch) }

// Leadership is a won campaign. Its methods are safe to call from any
// goroutine.
type Leadership struct {
	store Store
	key   string
	epoch int64
	lease LeaseID

	mu     sync.Mutex
	lost   bool // resigned, or seen deposed: sticky, as the key can never come back
	reason string
}

func newLeadership(s Store, key string, epoch int64, lease LeaseID) *Leadership {
	return &Leadership{store: s, key: key, epoch: epoch, lease: lease}
}

// Key is the election key this leader campaigned with.
func (l *Leadership) Key() string { return l.key }

// Epoch is the election key's create revision: it rises with every new
// leader, so it orders control planes.
func (l *Leadership) Epoch() int64 { return l.epoch }

// Lease is the lease the election key is attached to.
func (l *Leadership) Lease() LeaseID { return l.lease }

// Guard is LeaderGuard for this leadership: put it in a Txn's If and the
// txn is refused once this leader is deposed.
func (l *Leadership) Guard() Cmp { return LeaderGuard(l.key, l.epoch) }

// Txn applies txn guarded by this leadership. A txn refused because the
// guard failed is ErrNotLeader (and so is every later one); a txn refused
// by its own comparisons is Succeeded false, as Store.Txn says.
func (l *Leadership) Txn(ctx context.Context, txn Txn) (TxnResult, error) {
	if err := l.check(); err != nil {
		return TxnResult{}, err
	}
	guarded := Txn{If: append([]Cmp{l.Guard()}, txn.If...), Then: txn.Then}
	res, err := l.store.Txn(ctx, guarded)
	if err != nil || res.Succeeded {
		return res, err
	}
	return res, l.confirm(ctx)
}

// confirm reads the election key after a refused txn. A key with the
// epoch now had it at the txn too (its create revision cannot come back
// once gone), so only the txn's own comparisons failed; any other key
// means deposed, whether at the txn or since.
func (l *Leadership) confirm(ctx context.Context) error {
	kv, _, err := l.store.Get(ctx, l.key)
	if err != nil {
		return err
	}
	if kv.CreateRevision == l.epoch {
		return nil
	}
	l.lose("deposed")
	return l.check()
}

// Resign gives up the leadership: the election key is deleted if it is
// still this leader's, and every later Txn is ErrNotLeader. Resigning a
// deposed leadership does nothing and is not an error.
func (l *Leadership) Resign(ctx context.Context) error {
	l.lose("resigned")
	_, err := l.store.Txn(ctx, Txn{If: []Cmp{l.Guard()}, Then: []Op{Delete(l.key)}})
	return err
}

func (l *Leadership) lose(reason string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.lost {
		l.lost, l.reason = true, reason
	}
}

func (l *Leadership) check() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost {
		return fmt.Errorf("%w: %s (key %q, epoch %d)", ErrNotLeader, l.reason, l.key, l.epoch)
	}
	return nil
}
