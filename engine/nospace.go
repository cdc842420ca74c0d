package engine

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/felixbroker/felix/segment/vfs"
)

// A full disk. Creating a stream on it is refused with ErrNoSpace, and
// leaves nothing behind; deleting one works (the catalog writes its new
// list into a reserve only a delete gives up: package catalog) and frees
// the stream's space, after which the catalog takes its reserve back.
// Publishing to a shard whose log ran out of space is disklog.go.

// undoCreate takes back a stream whose shards did not open: its catalog
// entry, and whatever files opening them made. A create that failed for
// lack of space then matches ErrNoSpace; if the entry cannot be taken
// back, the failure is not a clean refusal and says so.
func (e *Engine) undoCreate(info StreamInfo, err error) error {
	if derr := e.opts.Catalog.Delete(info.ID); derr != nil {
		return errors.Join(err, fmt.Errorf("felix/engine: taking %s back out of the catalog: %w", info.ID, derr))
	}
	if info.Config.Durable {
		if rerr := vfs.RemoveAll(e.opts.FS, streamDir(e.opts.Dir, info.ID)); rerr != nil {
			e.opts.Logger.Warn("removing the files of a stream that failed to open", "stream", info.ID.String(), "err", rerr)
		}
	}
	return noSpace(err)
}

// noSpace marks err as ErrNoSpace when ENOSPC caused it.
func noSpace(err error) error {
	if errors.Is(err, syscall.ENOSPC) && !errors.Is(err, ErrNoSpace) {
		return fmt.Errorf("%w: %w", ErrNoSpace, err)
	}
	return err
}

// retakeReserve has the catalog take back the reserve a delete on a full
// disk gave up, now that the stream's space is free, so that the next
// delete on a full disk finds it (catalog.File.Reserve).
func (e *Engine) retakeReserve() {
	r, ok := e.opts.Catalog.(interface{ Reserve() error })
	if !ok {
		return
	}
	if err := r.Reserve(); err != nil {
		e.opts.Logger.Warn("the catalog could not take back its reserve; a delete on a full disk may fail", "err", err)
	}
}
