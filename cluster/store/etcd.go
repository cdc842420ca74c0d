package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Etcd is the Store on etcd, through a client/v3 client it owns: a client
// of an embedded member (StartEmbedded) or of an external cluster (Dial).
type Etcd struct {
	client  *clientv3.Client
	onClose func() // after the client is closed: stops an embedded member

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

func newEtcd(c *clientv3.Client, onClose func()) *Etcd {
	return &Etcd{client: c, onClose: onClose}
}

// Get implements Store.
func (s *Etcd) Get(ctx context.Context, key string) (KV, int64, error) {
	resp, err := s.client.Get(ctx, key)
	if err != nil {
		return KV{}, 0, s.fail("get", err)
	}
	if len(resp.Kvs) == 0 {
		return KV{}, resp.Header.Revision, nil
	}
	return fromEtcdKV(resp.Kvs[0]), resp.Header.Revision, nil
}

// Range implements Store.
func (s *Etcd) Range(ctx context.Context, prefix string) ([]KV, int64, error) {
	resp, err := s.client.Get(ctx, prefix, clientv3.WithPrefix())
	if err != nil {
		return nil, 0, s.fail("range", err)
	}
	kvs := make([]KV, len(resp.Kvs))
	for i, kv := range resp.Kvs {
		kvs[i] = fromEtcdKV(kv)
	}
	return kvs, resp.Header.Revision, nil
}

// Txn implements Store.
func (s *Etcd) Txn(ctx context.Context, txn Txn) (TxnResult, error) {
	if err := txn.validate(); err != nil {
		return TxnResult{}, err
	}
	resp, err := s.client.Txn(ctx).If(etcdCmps(txn.If)...).Then(etcdOps(txn.Then)...).Commit()
	if err != nil {
		return TxnResult{}, s.fail("txn", err)
	}
	return TxnResult{Succeeded: resp.Succeeded, Revision: resp.Header.Revision}, nil
}

// Compact implements Store.
func (s *Etcd) Compact(ctx context.Context, rev int64) error {
	if _, err := s.client.Compact(ctx, rev); err != nil {
		return s.fail(fmt.Sprintf("compact at %d", rev), err)
	}
	return nil
}

// Grant implements Store.
func (s *Etcd) Grant(ctx context.Context, ttl time.Duration) (Lease, error) {
	granted, err := grantedTTL(ttl)
	if err != nil {
		return Lease{}, err
	}
	resp, err := s.client.Grant(ctx, int64(granted/time.Second))
	if err != nil {
		return Lease{}, s.fail("lease grant", err)
	}
	return Lease{ID: LeaseID(resp.ID), TTL: time.Duration(resp.TTL) * time.Second}, nil
}

// KeepAlive implements Store: one renewal, never a stream of them, so the
// caller knows when each was sent.
func (s *Etcd) KeepAlive(ctx context.Context, id LeaseID) (time.Duration, error) {
	resp, err := s.client.KeepAliveOnce(ctx, clientv3.LeaseID(id))
	if err != nil {
		return 0, s.fail(fmt.Sprintf("lease keepalive %x", int64(id)), err)
	}
	return time.Duration(resp.TTL) * time.Second, nil
}

// Revoke implements Store.
func (s *Etcd) Revoke(ctx context.Context, id LeaseID) error {
	if _, err := s.client.Revoke(ctx, clientv3.LeaseID(id)); err != nil {
		return s.fail(fmt.Sprintf("lease revoke %x", int64(id)), err)
	}
	return nil
}

// Close implements Store: the client first, then (for an embedded member)
// the member, whose Close would otherwise wait seconds for the client's
// streams. Safe to call twice; the member is closed once.
func (s *Etcd) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		s.closeErr = s.client.Close()
		if errors.Is(s.closeErr, context.Canceled) {
			s.closeErr = nil // the client's own context, cancelled by Close
		}
		if s.onClose != nil {
			s.onClose()
		}
	})
	return s.closeErr
}

// fail maps etcd's errors onto the package's sentinels.
func (s *Etcd) fail(op string, err error) error {
	switch {
	case errors.Is(err, rpctypes.ErrCompacted):
		return fmt.Errorf("%w: etcd %s", ErrCompacted, op)
	case errors.Is(err, rpctypes.ErrFutureRev):
		return fmt.Errorf("%w: etcd %s", ErrFutureRevision, op)
	case errors.Is(err, rpctypes.ErrLeaseNotFound):
		return fmt.Errorf("%w: etcd %s", ErrLeaseNotFound, op)
	case s.closed.Load():
		return fmt.Errorf("%w: etcd %s: %v", ErrClosed, op, err)
	case transient(err):
		return fmt.Errorf("%w: etcd %s: %v", ErrUnavailable, op, err)
	}
	return fmt.Errorf("felix/cluster/store: etcd %s: %w", op, err)
}

// transient reports whether err is etcd saying it cannot answer for now:
// a proposal timed out (its leader failed or changed, its connection was
// lost), there is no leader, or the member is unreachable. A retry may
// succeed; a write that failed so may have been applied.
func transient(err error) bool {
	for _, e := range []error{rpctypes.ErrTimeout, rpctypes.ErrTimeoutDueToLeaderFail,
		rpctypes.ErrTimeoutDueToConnectionLost, rpctypes.ErrLeaderChanged, rpctypes.ErrNoLeader,
		rpctypes.ErrTooManyRequests, rpctypes.ErrTimeoutWaitAppliedIndex} {
		if errors.Is(err, e) {
			return true
		}
	}
	return status.Code(err) == codes.Unavailable
}

func fromEtcdKV(kv *mvccpb.KeyValue) KV {
	return KV{
		Key:            string(kv.Key),
		Value:          kv.Value,
		CreateRevision: kv.CreateRevision,
		ModRevision:    kv.ModRevision,
		Version:        kv.Version,
		Lease:          LeaseID(kv.Lease),
	}
}

func etcdCmps(cmps []Cmp) []clientv3.Cmp {
	out := make([]clientv3.Cmp, len(cmps))
	for i, c := range cmps {
		switch c.target {
		case targetMod:
			out[i] = clientv3.Compare(clientv3.ModRevision(c.key), "=", c.rev)
		case targetCreate:
			out[i] = clientv3.Compare(clientv3.CreateRevision(c.key), "=", c.rev)
		case targetValue:
			out[i] = clientv3.Compare(clientv3.Value(c.key), "=", string(c.value))
		case targetPresent:
			out[i] = clientv3.Compare(clientv3.CreateRevision(c.key), ">", 0)
		}
	}
	return out
}

func etcdOps(ops []Op) []clientv3.Op {
	out := make([]clientv3.Op, len(ops))
	for i, o := range ops {
		switch o.kind {
		case opPut:
			out[i] = clientv3.OpPut(o.key, string(o.value), clientv3.WithLease(clientv3.LeaseID(o.lease)))
		case opDelete:
			out[i] = clientv3.OpDelete(o.key)
		case opDeletePrefix:
			out[i] = clientv3.OpDelete(o.key, clientv3.WithPrefix())
		}
	}
	return out
}
