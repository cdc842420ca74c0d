package control

import (
	"context"

	"github.com/felixbroker/felix/cluster/store"
)

// followPrefix reads every key under prefix at one revision R and hands
// them to read with R, then watches prefix from R+1 and hands each batch of
// events to apply, until read or apply says done (nil), or the store
// fails (its error: ErrCompacted when the watch fell behind, and the
// caller may read again).
func followPrefix(ctx context.Context, s store.Store, prefix string, read func(kvs []store.KV, rev int64) bool, apply func([]store.Event) bool) error {
	kvs, rev, err := s.Range(ctx, prefix)
	if err != nil {
		return err
	}
	if read(kvs, rev) {
		return nil
	}
	w, err := s.Watch(ctx, prefix, rev+1)
	if err != nil {
		return err
	}
	defer w.Close()
	for {
		events, err := w.Next(ctx)
		if err != nil {
			return err
		}
		if apply(events) {
			return nil
		}
	}
}
