package control

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/store"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/cache"
)

// PlaceWaitDefault bounds a create's wait for placement when the config
// says nothing.
const PlaceWaitDefault = 10 * time.Second

// CatalogConfig configures NewCatalog.
type CatalogConfig struct {
	Store store.Store
	// PlaceWait bounds a create's wait for the control plane (the ctx may
	// end it sooner); 0 is PlaceWaitDefault.
	PlaceWait time.Duration
	// Clock stamps the entries' Created and times the wait; nil is
	// store.SystemClock().
	Clock store.Clock
}

// Catalog creates and deletes streams and caches in the store: what a
// broker does for a client's create or delete. Its methods are safe for
// concurrent use.
type Catalog struct {
	cfg CatalogConfig
}

// NewCatalog returns a Catalog over the store.
func NewCatalog(cfg CatalogConfig) *Catalog {
	if cfg.PlaceWait <= 0 {
		cfg.PlaceWait = PlaceWaitDefault
	}
	if cfg.Clock == nil {
		cfg.Clock = store.SystemClock()
	}
	return &Catalog{cfg: cfg}
}

// CreateStream writes the stream's catalog entry, if the name is free, and
// waits until every shard is placed. cfg is taken as given: the caller has
// filled in the defaults and checked it (the engine's rules); Shards and
// ReplicationFactor must be within the cluster's bounds. The errors:
//
//   - ErrExists (and engine.ErrStreamExists): the name is taken; nothing
//     was written.
//   - cluster.ErrTooFewBrokers: created, but its replication factor needs
//     more live brokers (the message says how many); it is placed once
//     enough have joined.
//   - ErrNotPlaced, or ctx's error: created, but not yet placed.
//   - store.ErrUnavailable: the store did not answer within the wait (it is
//     tried again until then: catalog_retry.go); maybe created.
func (c *Catalog) CreateStream(ctx context.Context, id engine.StreamID, cfg engine.StreamConfig) (Entry, error) {
	e, err := streamEntry(id, cfg, c.cfg.Clock.Now())
	if err != nil {
		return Entry{}, err
	}
	return c.create(ctx, e)
}

// CreateCache is CreateStream for a cache (cache.ErrCacheExists when the
// name is taken).
func (c *Catalog) CreateCache(ctx context.Context, id cache.ID, cfg cache.Config) (Entry, error) {
	e, err := cacheEntry(id, cfg, c.cfg.Clock.Now())
	if err != nil {
		return Entry{}, err
	}
	return c.create(ctx, e)
}

// create writes e's key if it is absent, then waits for its placement; e
// is as streamEntry or cacheEntry made it, checked, its Created stamped.
// The watch of its placement starts first, from the store's revision
// before the write: every assignment of the new incarnation comes after
// it, and a watch from the current revision starts at once (etcd catches
// a watch from an older revision up only every 100 ms).
func (c *Catalog) create(ctx context.Context, e Entry) (Entry, error) {
	ctx, stop := c.bounded(ctx, e.Object)
	defer stop()
	key := CatalogKey(e.Object)
	_, rev, err := c.cfg.Store.Get(ctx, key)
	if err != nil {
		return Entry{}, fmt.Errorf("felix/cluster/control: create %v: %w", e.Object, err)
	}
	w, err := c.cfg.Store.Watch(ctx, PlacementPrefix(e.Object), rev+1)
	if err != nil {
		return Entry{}, fmt.Errorf("felix/cluster/control: create %v: %w", e.Object, err)
	}
	defer w.Close()
	rev, ours, err := c.putAbsent(ctx, key, encodeEntry(e)) // catalog_retry.go
	if err != nil {
		return Entry{}, fmt.Errorf("felix/cluster/control: create %v: %w", e.Object, err)
	}
	if !ours {
		return Entry{}, existsError(e.Object)
	}
	e.Incarnation = rev
	err = newPlacement(e.Spec()).follow(ctx, w)
	if errors.Is(err, store.ErrCompacted) {
		err = c.await(ctx, e.Spec())
	}
	return e, causeOf(ctx, err)
}

// Delete removes an object's catalog entry, and the control plane's
// report that it is unplaced, in one txn; the control plane then deletes
// its assignments (Delete does not wait for that). Nothing under the
// name: ErrNotFound (and engine.ErrStreamNotFound or
// cache.ErrCacheNotFound).
func (c *Catalog) Delete(ctx context.Context, id cluster.ObjectID) error {
	_, err := c.delete(ctx, id)
	return err
}

// delete is Delete, and the revision of the txn that deleted.
func (c *Catalog) delete(ctx context.Context, id cluster.ObjectID) (int64, error) {
	if err := id.Check(); err != nil {
		return 0, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	key := CatalogKey(id)
	rev, gone, err := c.deletePresent(ctx, store.Txn{
		If:   []store.Cmp{store.Present(key)},
		Then: []store.Op{store.Delete(key), store.Delete(UnplacedKey(id))},
	})
	if err != nil {
		return 0, fmt.Errorf("felix/cluster/control: delete %v: %w", id, err)
	}
	if !gone {
		return 0, notFoundError(id)
	}
	return rev, nil
}
