package control

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/felixbroker/felix/cluster/store"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/cache"
)

// MigrateReport counts what Migrate did.
type MigrateReport struct {
	Streams, Caches               int // entries written
	StreamsPresent, CachesPresent int // already in the store with the same config
}

// Migrate writes a broker's file catalogs (engine.OpenFileCatalog's and
// cache.OpenFileCatalog's List) into the store's catalog, for a broker
// that joins a cluster with streams and caches of its own. Each entry is
// written only if its name is absent, with its config and Created; one
// already there with the same config is counted present, so migrating
// again (after a crash mid-way) is harmless. One there with another
// config, or that cannot be read, is never overwritten: an error matching
// ErrConflict names it. An entry the cluster cannot place (a bad name, a
// config outside its bounds) is ErrInvalid. Those errors are per entry:
// the rest are migrated, and the errors come back joined. A store error
// ends the migration at once. It does not wait for placement: the control
// plane places the entries as it places any other. The caller renames the
// files only once it returns nil (doc.go, Migration).
func Migrate(ctx context.Context, c *Catalog, streams []engine.StreamInfo, caches []cache.Info) (MigrateReport, error) {
	m := &migration{ctx: ctx, c: c}
	for _, info := range streams {
		e, err := streamEntry(info.ID, info.Config, info.Created)
		if err := m.entry(e, err, &m.rep.Streams, &m.rep.StreamsPresent); err != nil {
			return m.rep, err
		}
	}
	for _, info := range caches {
		e, err := cacheEntry(info.ID, info.Config, info.Created)
		if err := m.entry(e, err, &m.rep.Caches, &m.rep.CachesPresent); err != nil {
			return m.rep, err
		}
	}
	return m.rep, errors.Join(m.refused...)
}

// migration is one Migrate's progress.
type migration struct {
	ctx     context.Context
	c       *Catalog
	rep     MigrateReport
	refused []error // the entries refused, each naming its entry
}

// entry migrates e (unless checking it failed: checked) and counts it,
// written or present. A refusal is kept; any other error is returned, and
// ends the migration.
func (m *migration) entry(e Entry, checked error, written, present *int) error {
	wrote, err := false, checked
	if err == nil {
		if e.Created.IsZero() {
			e.Created = m.c.cfg.Clock.Now().UTC()
		}
		wrote, err = m.c.putIfAbsent(m.ctx, e)
	}
	switch {
	case errors.Is(err, ErrConflict), errors.Is(err, ErrInvalid):
		m.refused = append(m.refused, fmt.Errorf("felix/cluster/control: migrate: %w", err))
	case err != nil:
		return err
	case wrote:
		*written++
	default:
		*present++
	}
	return nil
}

// putIfAbsent writes e's entry if its name is absent (true), or checks
// that the entry there holds e's config (false, or ErrConflict).
func (c *Catalog) putIfAbsent(ctx context.Context, e Entry) (bool, error) {
	key := CatalogKey(e.Object)
	for {
		res, err := c.cfg.Store.Txn(ctx, store.Txn{
			If:   []store.Cmp{store.Absent(key)},
			Then: []store.Op{store.Put(key, encodeEntry(e))},
		})
		if err != nil {
			return false, fmt.Errorf("felix/cluster/control: migrate %v: %w", e.Object, err)
		}
		if res.Succeeded {
			return true, nil
		}
		kv, _, err := c.cfg.Store.Get(ctx, key)
		if err != nil {
			return false, fmt.Errorf("felix/cluster/control: migrate %v: %w", e.Object, err)
		}
		if kv.Exists() {
			return false, sameEntry(e, kv)
		}
		// deleted between the two: try the write again
	}
}

// sameEntry is nil when the stored entry kv holds e's config, else an
// error matching ErrConflict that shows both.
func sameEntry(e Entry, kv store.KV) error {
	stored, err := decodeEntry(e.Object, kv)
	if err != nil {
		return fmt.Errorf("%w: %v: the store's entry cannot be read: %v", ErrConflict, e.Object, err)
	}
	if !sameConfig(stored, e) {
		return fmt.Errorf("%w: %v: the store holds %s, the file %s", ErrConflict, e.Object,
			configJSON(stored), configJSON(e))
	}
	return nil
}

// sameConfig reports whether two entries hold the same config, compared
// as stored (JSON), so a config read back from the store equals the one
// written.
func sameConfig(a, b Entry) bool {
	return bytes.Equal(configJSON(a), configJSON(b))
}

// configJSON is an entry's config as stored, for an error's message.
func configJSON(e Entry) []byte {
	if e.Stream != nil {
		return mustMarshal(e.Stream)
	}
	return mustMarshal(e.Cache)
}
