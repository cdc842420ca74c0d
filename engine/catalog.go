package engine

import (
	"time"

	"github.com/felixbroker/felix/engine/catalog"
	"github.com/felixbroker/felix/segment/vfs"
)

// StreamInfo is a stream as the catalog holds it.
type StreamInfo struct {
	ID         StreamID     `json:"id"`
	Config     StreamConfig `json:"config"`
	Generation uint32       `json:"generation"` // leader epoch of every shard, single broker
	Created    time.Time    `json:"created"`
}

// Catalog holds the streams that exist. The broker keeps it in its data
// directory; the cluster layer will supply one backed by the control plane.
// Implementations are safe for concurrent use.
type Catalog interface {
	Create(info StreamInfo) error // ErrStreamExists when the id is taken
	Delete(id StreamID) error     // ErrStreamNotFound when it is not
	Get(id StreamID) (StreamInfo, bool)
	List() []StreamInfo // sorted by id
}

// catalogFormat is the stream catalog's file: <data>/catalog.json,
// {"version": 1, "streams": [...]}. Frozen.
var catalogFormat = catalog.Format{File: "catalog.json", Field: "streams", Version: 1,
	ErrExists: ErrStreamExists, ErrNotFound: ErrStreamNotFound}

// FileCatalog is a Catalog kept as JSON in a directory, replaced atomically
// on every change (package catalog). With a nil FS it lives in memory only.
type FileCatalog = catalog.File[StreamID, StreamInfo]

// OpenFileCatalog loads the catalog in dir, or starts an empty one.
func OpenFileCatalog(fs vfs.FS, dir string) (*FileCatalog, error) {
	return catalog.Open[StreamID, StreamInfo](fs, dir, catalogFormat)
}

// CatalogKey and CatalogName make a StreamInfo a catalog entry.
func (s StreamInfo) CatalogKey() StreamID { return s.ID }

// CatalogName orders the catalog.
func (s StreamInfo) CatalogName() string { return s.ID.String() }
