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
func (c *Catalog) CreateStream(ctx context.Context, id engine.StreamID, cfg engine.StreamConfig) (Entry, error) {
	if err := id.Check(); err != nil {
		return Entry{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	oid := cluster.ObjectID{Kind: cluster.KindStream, Tenant: id.Tenant, Namespace: id.Namespace, Name: id.Name}
	return c.create(ctx, Entry{Object: oid, Stream: &cfg}, engine.ErrStreamExists)
}

// CreateCache is CreateStream for a cache (cache.ErrCacheExists when the
// name is taken).
func (c *Catalog) CreateCache(ctx context.Context, id cache.ID, cfg cache.Config) (Entry, error) {
	if err := id.Check(); err != nil {
		return Entry{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	oid := cluster.ObjectID{Kind: cluster.KindCache, Tenant: id.Tenant, Namespace: id.Namespace, Name: id.Name}
	return c.create(ctx, Entry{Object: oid, Cache: &cfg}, cache.ErrCacheExists)
}

// create writes e's key if it is absent, then waits for its placement.
// The watch of its placement starts first, from the store's revision
// before the write: every assignment of the new incarnation comes after
// it, and a watch from the current revision starts at once (etcd catches
// a watch from an older revision up only every 100 ms).
func (c *Catalog) create(ctx context.Context, e Entry, exists error) (Entry, error) {
	e.Created = c.cfg.Clock.Now()
	e.Incarnation = 1 // checked below with the rest; the store gives the real one
	if err := e.Spec().Check(); err != nil {
		return Entry{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
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
	res, err := c.cfg.Store.Txn(ctx, store.Txn{
		If:   []store.Cmp{store.Absent(key)},
		Then: []store.Op{store.Put(key, encodeEntry(e))},
	})
	if err != nil {
		return Entry{}, fmt.Errorf("felix/cluster/control: create %v: %w", e.Object, err)
	}
	if !res.Succeeded {
		return Entry{}, fmt.Errorf("%w: %v: %w", ErrExists, e.Object, exists)
	}
	e.Incarnation = res.Revision
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
	if err := id.Check(); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	key := CatalogKey(id)
	res, err := c.cfg.Store.Txn(ctx, store.Txn{
		If:   []store.Cmp{store.Present(key)},
		Then: []store.Op{store.Delete(key), store.Delete(UnplacedKey(id))},
	})
	if err != nil {
		return fmt.Errorf("felix/cluster/control: delete %v: %w", id, err)
	}
	if !res.Succeeded {
		notFound := engine.ErrStreamNotFound
		if id.Kind == cluster.KindCache {
			notFound = cache.ErrCacheNotFound
		}
		return fmt.Errorf("%w: %v: %w", ErrNotFound, id, notFound)
	}
	return nil
}
