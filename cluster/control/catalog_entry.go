package control

import (
	"fmt"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/cache"
)

// streamEntry is the catalog entry a stream is created with, checked: a
// bad name or a config outside the cluster's bounds is ErrInvalid.
func streamEntry(id engine.StreamID, cfg engine.StreamConfig, created time.Time) (Entry, error) {
	if err := id.Check(); err != nil {
		return Entry{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return checkedEntry(Entry{Object: streamObject(id), Stream: &cfg, Created: created.UTC()})
}

// cacheEntry is streamEntry for a cache.
func cacheEntry(id cache.ID, cfg cache.Config, created time.Time) (Entry, error) {
	if err := id.Check(); err != nil {
		return Entry{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return checkedEntry(Entry{Object: cacheObject(id), Cache: &cfg, Created: created.UTC()})
}

// streamObject is a stream's name in the store.
func streamObject(id engine.StreamID) cluster.ObjectID {
	return cluster.ObjectID{Kind: cluster.KindStream, Tenant: id.Tenant, Namespace: id.Namespace, Name: id.Name}
}

// cacheObject is a cache's name in the store.
func cacheObject(id cache.ID) cluster.ObjectID {
	return cluster.ObjectID{Kind: cluster.KindCache, Tenant: id.Tenant, Namespace: id.Namespace, Name: id.Name}
}

// checkedEntry refuses what placement could not place.
func checkedEntry(e Entry) (Entry, error) {
	spec := e.Spec()
	spec.Incarnation = 1 // checked with the rest; the store gives the real one
	if err := spec.Check(); err != nil {
		return Entry{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return e, nil
}

// existsError is a create's answer when the name is taken: ErrExists,
// and the engine's error for the kind.
func existsError(id cluster.ObjectID) error {
	kindErr := engine.ErrStreamExists
	if id.Kind == cluster.KindCache {
		kindErr = cache.ErrCacheExists
	}
	return fmt.Errorf("%w: %v: %w", ErrExists, id, kindErr)
}

// notFoundError is a delete's answer when nothing has the name:
// ErrNotFound, and the engine's error for the kind.
func notFoundError(id cluster.ObjectID) error {
	kindErr := engine.ErrStreamNotFound
	if id.Kind == cluster.KindCache {
		kindErr = cache.ErrCacheNotFound
	}
	return fmt.Errorf("%w: %v: %w", ErrNotFound, id, kindErr)
}
