package control

import (
	"cmp"
	"slices"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/engine"
)

var _ engine.Catalog = (*StreamCatalog)(nil)

// StreamCatalog is the engine's catalog of streams kept in the store, for a
// broker in a cluster: Get and List read this broker's View, Create and
// Delete write through a Catalog and return once the View has seen the
// change, so the engine, asking Holds right after, finds the stream's
// shards (or finds them gone). Safe for concurrent use.
type StreamCatalog struct {
	s storeCatalog
}

// NewStreamCatalog is a StreamCatalog writing through c and reading v (this
// broker's view of the same store). wait bounds each Create and Delete,
// the store's calls and the wait for the view together; 0 is
// CatalogWaitDefault.
func NewStreamCatalog(c *Catalog, v *View, wait time.Duration) *StreamCatalog {
	return &StreamCatalog{s: newStoreCatalog(c, v, wait)}
}

// Create implements engine.Catalog: it writes the stream's entry with
// info's config and Created (now, when zero; info.Generation is the
// store's to give) and waits until every shard is placed and this
// broker's view holds the placement. A name taken: an error matching
// engine.ErrStreamExists. Created but not placed within the wait (too few
// brokers, no control plane, a slow view): an error matching
// ErrCreatedNotPlaced and its cause; that create is not undone, the
// stream exists and is placed once the cluster can.
func (c *StreamCatalog) Create(info engine.StreamInfo) error {
	e, err := streamEntry(info.ID, info.Config, c.s.created(info.Created))
	if err != nil {
		return err
	}
	return c.s.create(e)
}

// Delete implements engine.Catalog, and returns once this broker's view
// has seen the stream go. Not found: an error matching
// engine.ErrStreamNotFound.
func (c *StreamCatalog) Delete(id engine.StreamID) error {
	return c.s.delete(streamObject(id))
}

// Get implements engine.Catalog, as this broker's view holds it.
func (c *StreamCatalog) Get(id engine.StreamID) (engine.StreamInfo, bool) {
	o, ok := c.s.view.catalogObject(streamObject(id))
	if !ok {
		return engine.StreamInfo{}, false
	}
	return streamInfo(o), true
}

// List implements engine.Catalog: the streams this broker's view holds,
// sorted by id as engine.FileCatalog sorts them.
func (c *StreamCatalog) List() []engine.StreamInfo {
	var out []engine.StreamInfo
	for _, o := range c.s.view.catalogObjects(cluster.KindStream) {
		out = append(out, streamInfo(o))
	}
	slices.SortFunc(out, func(a, b engine.StreamInfo) int { return cmp.Compare(a.CatalogName(), b.CatalogName()) })
	return out
}

func streamInfo(o catalogObject) engine.StreamInfo {
	id := engine.StreamID{Tenant: o.Object.Tenant, Namespace: o.Object.Namespace, Name: o.Object.Name}
	return engine.StreamInfo{ID: id, Config: *o.Stream, Generation: o.Generation, Created: o.Created}
}
