package cache

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/segment/vfs"
)

// A full disk, as for streams (engine/nospace.go): creating a cache on it
// is refused with an error matching engine.ErrNoSpace (or, when the
// catalog could not be written, catalog.ErrNoSpace) and leaves nothing;
// dropping one works, the catalog writing into the reserve only a delete
// gives up, and frees the cache's space, after which the catalog takes
// its reserve back. A cache shard whose log ran out of space serves again
// once space is back (heal.go).

// undoCreate takes back a cache whose shards did not open: its catalog
// entry, and whatever files opening them made.
func (s *Store) undoCreate(info Info, err error) error {
	if derr := s.opts.Catalog.Delete(info.ID); derr != nil {
		return errors.Join(err, fmt.Errorf("felix/cache: taking %s back out of the catalog: %w", info.ID, derr))
	}
	fs, root := s.fsFor(info.Config)
	if rerr := vfs.RemoveAll(fs, cacheDir(root, info.ID)); rerr != nil {
		s.opts.Logger.Warn("removing the files of a cache that failed to open", "cache", info.ID.String(), "err", rerr)
	}
	if errors.Is(err, syscall.ENOSPC) {
		return fmt.Errorf("%w: %w", engine.ErrNoSpace, err)
	}
	return err
}

// retakeReserve has the catalog take back the reserve a drop on a full
// disk gave up, now that the cache's space is free.
func (s *Store) retakeReserve() {
	r, ok := s.opts.Catalog.(interface{ Reserve() error })
	if !ok {
		return
	}
	if err := r.Reserve(); err != nil {
		s.opts.Logger.Warn("the cache catalog could not take back its reserve; a drop on a full disk may fail", "err", err)
	}
}
