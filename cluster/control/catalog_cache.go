package control

import (
	"cmp"
	"slices"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/engine/cache"
)

var _ cache.Catalog = (*CacheCatalog)(nil)

// CacheCatalog is StreamCatalog for the cache store's catalog of caches.
// Safe for concurrent use.
type CacheCatalog struct {
	s storeCatalog
}

// NewCacheCatalog is NewStreamCatalog for caches.
func NewCacheCatalog(c *Catalog, v *View, wait time.Duration) *CacheCatalog {
	return &CacheCatalog{s: newStoreCatalog(c, v, wait)}
}

// Create implements cache.Catalog as StreamCatalog.Create does
// engine.Catalog (a name taken: an error matching cache.ErrCacheExists).
func (c *CacheCatalog) Create(info cache.Info) error {
	e, err := cacheEntry(info.ID, info.Config, c.s.created(info.Created))
	if err != nil {
		return err
	}
	return c.s.create(e)
}

// Delete implements cache.Catalog, and returns once this broker's view has
// seen the cache go. Not found: an error matching cache.ErrCacheNotFound.
func (c *CacheCatalog) Delete(id cache.ID) error {
	return c.s.delete(cacheObject(id))
}

// Get implements cache.Catalog, as this broker's view holds it.
func (c *CacheCatalog) Get(id cache.ID) (cache.Info, bool) {
	o, ok := c.s.view.catalogObject(cacheObject(id))
	if !ok {
		return cache.Info{}, false
	}
	return cacheInfo(o), true
}

// List implements cache.Catalog: the caches this broker's view holds,
// sorted by id as cache.FileCatalog sorts them.
func (c *CacheCatalog) List() []cache.Info {
	var out []cache.Info
	for _, o := range c.s.view.catalogObjects(cluster.KindCache) {
		out = append(out, cacheInfo(o))
	}
	slices.SortFunc(out, func(a, b cache.Info) int { return cmp.Compare(a.CatalogName(), b.CatalogName()) })
	return out
}

func cacheInfo(o catalogObject) cache.Info {
	id := cache.ID{Tenant: o.Object.Tenant, Namespace: o.Object.Namespace, Name: o.Object.Name}
	return cache.Info{ID: id, Config: *o.Cache, Generation: o.Generation, Created: o.Created}
}
