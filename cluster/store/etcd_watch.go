package store

import (
	"context"
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Watch implements Store. The watch requires a leader: on a member cut
// off from its cluster's leader it ends with an error instead of going
// silent.
func (s *Etcd) Watch(ctx context.Context, prefix string, fromRev int64) (Watch, error) {
	if fromRev < 1 {
		return nil, fmt.Errorf("%w: a watch from revision %d (at least 1)", ErrInvalid, fromRev)
	}
	if s.closed.Load() {
		return nil, ErrClosed
	}
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	ch := s.client.Watch(wctx, prefix, clientv3.WithPrefix(), clientv3.WithRev(fromRev))
	return &etcdWatch{store: s, ctx: ctx, ch: ch, cancel: cancel}, nil
}

// etcdWatch reads a client/v3 watch channel. Next is called from one
// goroutine at a time; Close cancels the channel's context from any.
type etcdWatch struct {
	store  *Etcd
	ctx    context.Context
	ch     clientv3.WatchChan
	cancel context.CancelFunc
	err    error // sticky, owned by the goroutine calling Next
}

func (w *etcdWatch) Next(ctx context.Context) ([]Event, error) {
	for w.err == nil {
		select {
		case resp, ok := <-w.ch:
			if events := w.take(resp, ok); len(events) > 0 {
				return events, nil
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return nil, w.err
}

func (w *etcdWatch) Close() { w.cancel() }

// take converts one response, or records why the watch ended.
func (w *etcdWatch) take(resp clientv3.WatchResponse, ok bool) []Event {
	switch {
	case !ok:
		w.err = w.endErr()
	case resp.CompactRevision != 0:
		w.err = fmt.Errorf("%w: an etcd watch behind the compaction at revision %d", ErrCompacted, resp.CompactRevision)
	case resp.Err() != nil:
		w.err = w.store.fail("watch", resp.Err())
	}
	if w.err != nil {
		w.cancel()
		return nil
	}
	events := make([]Event, len(resp.Events))
	for i, ev := range resp.Events {
		events[i] = Event{Kind: EventPut, KV: fromEtcdKV(ev.Kv)}
		if ev.Type == mvccpb.DELETE {
			events[i].Kind = EventDelete
		}
	}
	return events
}

// endErr says why the channel closed: the watch's ctx, or a Close of the
// watch or its store.
func (w *etcdWatch) endErr() error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	return fmt.Errorf("%w: the etcd watch channel closed", ErrClosed)
}
