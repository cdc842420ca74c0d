package cache

import (
	"github.com/felixbroker/felix/engine/catalog"
	"github.com/felixbroker/felix/segment/vfs"
)

// Catalog holds the caches that exist. The broker keeps it beside the
// engine's stream catalog in its data directory; the cluster layer will
// supply one backed by the control plane. Implementations are safe for
// concurrent use.
type Catalog interface {
	Create(info Info) error // ErrCacheExists when the id is taken
	Delete(id ID) error     // ErrCacheNotFound when it is not
	Get(id ID) (Info, bool)
	List() []Info // sorted by id
}

// catalogFormat is the cache catalog's file: <data>/caches/catalog.json,
// {"version": 1, "caches": [...]}. Frozen.
var catalogFormat = catalog.Format{File: "catalog.json", Field: "caches", Version: 1,
	ErrExists: ErrCacheExists, ErrNotFound: ErrCacheNotFound}

// FileCatalog is a Catalog kept as JSON in a directory, replaced atomically
// on every change, as the engine keeps its stream catalog (package
// catalog). With a nil FS it lives in memory only.
type FileCatalog = catalog.File[ID, Info]

// OpenFileCatalog loads the catalog in dir, or starts an empty one.
func OpenFileCatalog(fs vfs.FS, dir string) (*FileCatalog, error) {
	return catalog.Open[ID, Info](fs, dir, catalogFormat)
}

// CatalogKey and CatalogName make an Info a catalog entry.
func (i Info) CatalogKey() ID { return i.ID }

// CatalogName orders the catalog.
func (i Info) CatalogName() string { return i.ID.String() }
