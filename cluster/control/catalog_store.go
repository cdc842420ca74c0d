package control

import (
	"context"
	"fmt"
	"time"

	"github.com/felixbroker/felix/cluster"
)

// CatalogWaitDefault bounds each call of a StreamCatalog or CacheCatalog
// when NewStreamCatalog or NewCacheCatalog is given 0.
const CatalogWaitDefault = 10 * time.Second

// storeCatalog is what StreamCatalog and CacheCatalog share: writes
// through the Catalog, reads and waits on this broker's View. The
// engine's catalog interfaces take no context, so every call is bounded
// by wait.
type storeCatalog struct {
	catalog *Catalog
	view    *View
	wait    time.Duration
}

func newStoreCatalog(c *Catalog, v *View, wait time.Duration) storeCatalog {
	if wait <= 0 {
		wait = CatalogWaitDefault
	}
	return storeCatalog{catalog: c, view: v, wait: wait}
}

// bounded is a context ended wait from now, with ErrNotPlaced naming
// what waited.
func (s storeCatalog) bounded(id cluster.ObjectID, what string) (context.Context, func()) {
	return withWait(context.Background(), s.catalog.cfg.Clock, s.wait, func() error {
		return fmt.Errorf("%w: %v: %s within %v", ErrNotPlaced, id, what, s.wait)
	})
}

// create writes e and waits, within the wait, until the control plane has
// placed it and this broker's view holds the placement, so the engine's
// Holds, asked next, answers for it. Errors: ErrExists (the kind's too)
// and ErrInvalid, nothing written; a store error before the write, as it
// came (store.ErrUnavailable past the wait: maybe written, catalog_retry.go);
// created but not placed: ErrCreatedNotPlaced, also matching why.
func (s storeCatalog) create(e Entry) error {
	ctx, stop := s.bounded(e.Object, "placed and seen by this broker's view")
	defer stop()
	created, err := s.catalog.create(ctx, e)
	switch {
	case err == nil:
	case created.Incarnation == 0: // nothing written, or not known to be (store.ErrUnavailable)
		return err
	default:
		return fmt.Errorf("%w: %v: %w", ErrCreatedNotPlaced, e.Object, err)
	}
	if err := s.view.awaitPlaced(ctx, e.Object, created.Incarnation); err != nil {
		return fmt.Errorf("%w: %v: this broker's view has not seen it placed: %w", ErrCreatedNotPlaced, e.Object, err)
	}
	return nil
}

// delete removes the entry and waits, within the wait, until this
// broker's view has seen the delete (then Holds is false for every shard
// of it). Nothing under the name: ErrNotFound (the kind's too).
func (s storeCatalog) delete(id cluster.ObjectID) error {
	ctx, stop := s.bounded(id, "a delete seen by this broker's view")
	defer stop()
	rev, err := s.catalog.delete(ctx, id)
	if err != nil {
		return causeOf(ctx, err)
	}
	if err := s.view.awaitRevision(ctx, rev); err != nil {
		return fmt.Errorf("felix/cluster/control: %v deleted, but this broker's view has not seen it: %w", id, err)
	}
	return nil
}

// created is the Created an entry is written with: the caller's, or now.
func (s storeCatalog) created(t time.Time) time.Time {
	if t.IsZero() {
		return s.catalog.cfg.Clock.Now()
	}
	return t
}
