package broker

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/control"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/cache"
	"github.com/felixbroker/felix/segment/vfs"
)

// The catalog files of a broker that ran alone, and what each becomes once
// its entries are in the store.
const (
	catalogFile    = "catalog.json" // engine's <data>/catalog.json, the cache store's <data>/caches/catalog.json
	migratedSuffix = ".migrated"
	reserveSuffix  = ".reserve" // the file catalog's space reserve beside it (engine/catalog)
	cachesSubdir   = "caches"
	migrating      = "migrating the data directory's catalogs into the cluster's store"
)

// migrate moves the catalogs of a data directory that ran alone into the
// store, once: it reads <data>/catalog.json and <data>/caches/catalog.json,
// writes their entries with control.Migrate, and only once that returned
// nil renames each file to catalog.json.migrated (and lets its reserve
// go). A crash in between migrates again at the next start, harmlessly:
// Migrate finds what it wrote present. An entry the store holds with
// another config fails Start, the files left for an operator to settle.
// It returns the objects it migrated (the broker waits for the control
// plane to place them before its first reconcile).
func (n *node) migrate(fs vfs.FS, dataDir string) ([]cluster.ObjectID, error) {
	if fs == nil || dataDir == "" {
		return nil, nil
	}
	streamsDir, cachesDir := dataDir, filepath.Join(dataDir, cachesSubdir)
	hasStreams, hasCaches := fileExists(fs, streamsDir, catalogFile), fileExists(fs, cachesDir, catalogFile)
	if !hasStreams && !hasCaches {
		return nil, nil
	}
	streams, caches, err := readFileCatalogs(fs, streamsDir, cachesDir, hasStreams, hasCaches)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), n.cfg.StoreWait)
	defer cancel()
	rep, err := control.Migrate(ctx, n.catalog, streams, caches)
	if err != nil {
		return nil, fmt.Errorf("felix/broker: %s: %w", migrating, err)
	}
	for dir, has := range map[string]bool{streamsDir: hasStreams, cachesDir: hasCaches} {
		if has {
			if err := retire(fs, dir); err != nil {
				return nil, err
			}
		}
	}
	n.logger.Info("migrated the data directory's catalogs into the cluster", "streams", rep.Streams,
		"streams_present", rep.StreamsPresent, "caches", rep.Caches, "caches_present", rep.CachesPresent)
	return objectIDs(streams, caches), nil
}

// objectIDs names the streams and caches in the control plane's terms.
func objectIDs(streams []engine.StreamInfo, caches []cache.Info) []cluster.ObjectID {
	var ids []cluster.ObjectID
	for _, s := range streams {
		ids = append(ids, cluster.ObjectID{Kind: cluster.KindStream, Tenant: s.ID.Tenant, Namespace: s.ID.Namespace, Name: s.ID.Name})
	}
	for _, c := range caches {
		ids = append(ids, cluster.ObjectID{Kind: cluster.KindCache, Tenant: c.ID.Tenant, Namespace: c.ID.Namespace, Name: c.ID.Name})
	}
	return ids
}

// readFileCatalogs lists the entries of the catalog files that exist
// (opening one that does not would make it).
func readFileCatalogs(fs vfs.FS, streamsDir, cachesDir string, hasStreams, hasCaches bool) ([]engine.StreamInfo, []cache.Info, error) {
	var streams []engine.StreamInfo
	var caches []cache.Info
	if hasStreams {
		c, err := engine.OpenFileCatalog(fs, streamsDir)
		if err != nil {
			return nil, nil, err
		}
		streams = c.List()
	}
	if hasCaches {
		c, err := cache.OpenFileCatalog(fs, cachesDir)
		if err != nil {
			return nil, nil, err
		}
		caches = c.List()
	}
	return streams, caches, nil
}

// retire renames dir's catalog.json to catalog.json.migrated, durably, and
// removes the file catalog's reserve: the catalog lives in the store now.
func retire(fs vfs.FS, dir string) error {
	path := filepath.Join(dir, catalogFile)
	if err := fs.Rename(path, path+migratedSuffix); err != nil {
		return fmt.Errorf("felix/broker: %s: %w", migrating, err)
	}
	if err := fs.SyncDir(dir); err != nil {
		return fmt.Errorf("felix/broker: %s: %w", migrating, err)
	}
	if err := fs.Remove(path + reserveSuffix); err != nil && !errors.Is(err, vfs.ErrNotExist) {
		return fmt.Errorf("felix/broker: %s: %w", migrating, err)
	}
	return nil
}

func fileExists(fs vfs.FS, dir, name string) bool {
	_, err := fs.Stat(filepath.Join(dir, name))
	return err == nil
}
