package engine

import (
	"errors"
	"fmt"
	"maps"
)

// Reconcile brings what is open here in line with Options.Catalog and
// Options.Placement, which may both have changed since Open (in a cluster,
// the control plane's view changes them):
//
//   - a stream open here but no longer in the catalog (or recreated there:
//     another creation time) is stopped with ErrStreamDeleted and its
//     directory removed, as DeleteStream does;
//   - a stream in the catalog that is not open is added, its held shards
//     opened;
//   - a held shard that is not open (newly placed here, or one whose log
//     failed to open before) is opened;
//   - an open shard no longer held is stopped: its subscriptions end with a
//     *NotLeaderError naming the leader when Ownership knows one (none
//     otherwise), its attachments close, its log closes; its files stay on
//     disk.
//
// A shard that fails to open is named in the error returned, joined with
// the others' (errors.Join); every other shard is reconciled all the same,
// and calling Reconcile again tries it again. It returns ErrClosed once
// the engine has closed. Safe to call concurrently with everything else:
// it holds Engine.layout throughout (CreateStream, DeleteStream and Close
// wait for it), takes Engine.mu only to change the stream table, and holds
// neither lock a publish, read or subscription takes while it opens logs
// or stops shards.
func (e *Engine) Reconcile() error {
	e.layout.Lock()
	defer e.layout.Unlock()
	e.mu.RLock()
	closed, open := e.closed, maps.Clone(e.streams)
	e.mu.RUnlock()
	if closed {
		return ErrClosed
	}
	want := e.opts.Catalog.List()
	inCatalog := make(map[StreamID]StreamInfo, len(want))
	for _, info := range want {
		inCatalog[info.ID] = info
	}
	var errs []error
	for id, s := range open {
		if info, ok := inCatalog[id]; !ok || !sameStream(info, s.info) {
			errs = append(errs, e.removeStream(s))
		}
	}
	for _, info := range want {
		if s := e.lookup(info.ID); s != nil {
			errs = append(errs, e.reconcileShards(s))
		} else {
			errs = append(errs, e.addStream(info))
		}
	}
	return errors.Join(errs...)
}

// sameStream reports whether the catalog entry info is still the stream
// open here: a stream deleted and created again behind the engine's back
// has a new creation time, and its old records must not be served as its.
func sameStream(info, open StreamInfo) bool { return info.Created.Equal(open.Created) }

// removeStream stops a stream the catalog no longer has and removes its
// directory. Engine.layout is held.
func (e *Engine) removeStream(s *Stream) error {
	for sh := range s.openShards() {
		e.opts.Logger.Info("shard closed: its stream left the catalog", "stream", s.info.ID.String(), "shard", sh.index)
	}
	err := e.dropStream(s)
	e.opts.Logger.Info("stream removed: no longer in the catalog", "stream", s.info.ID.String())
	if err != nil {
		return fmt.Errorf("felix/engine: removing %s: %w", s.info.ID, err)
	}
	return nil
}

// addStream opens the held shards of a catalog entry not open here and
// puts the stream in the table, even when some shard failed to open: the
// stream exists, and the next Reconcile tries that shard again.
// Engine.layout is held.
func (e *Engine) addStream(info StreamInfo) error {
	if err := checkShards(info); err != nil {
		return err
	}
	s := e.newStream(info)
	err := e.reconcileShards(s)
	e.install(s)
	e.opts.Logger.Info("stream added from the catalog", "stream", info.ID.String(), "shards", info.Config.Shards, "durable", info.Config.Durable)
	return err
}

// reconcileShards opens each shard of s this broker holds that is not
// open, and stops each open one it no longer holds. Engine.layout is
// held, so no one else stores into s's slots meanwhile.
func (e *Engine) reconcileShards(s *Stream) error {
	var errs []error
	for i := range s.slots {
		held, sh := e.placement.Holds(s.info.ID, i), s.slots[i].Load()
		switch {
		case held && sh == nil:
			errs = append(errs, e.openSlot(s, i))
		case !held && sh != nil:
			errs = append(errs, e.closeSlot(s, i, sh))
		}
	}
	return errors.Join(errs...)
}

// openSlot opens shard i of s and puts it in its slot; from then on
// Shard(i) returns it and publishes reach its log.
func (e *Engine) openSlot(s *Stream, i int) error {
	sh, err := e.openShard(s, i)
	if err != nil {
		e.opts.Logger.Warn("a shard this broker holds did not open; the next Reconcile tries again",
			"stream", s.info.ID.String(), "shard", i, "err", err)
		return err
	}
	s.slots[i].Store(sh)
	e.opts.Logger.Info("shard opened", "stream", s.info.ID.String(), "shard", i)
	return nil
}

// closeSlot empties shard i's slot first, so nothing new finds sh, then
// stops it: an append that found it just before is refused as not held
// (Stream.appendRefusal). Its files stay: moving a replica's data away is
// not the engine's business.
func (e *Engine) closeSlot(s *Stream, i int, sh *Shard) error {
	s.slots[i].Store(nil)
	why := e.movedAway(s.info.ID, i)
	err := sh.stop(why)
	e.opts.Logger.Info("shard closed: no longer held here; its files stay", "stream", s.info.ID.String(), "shard", i, "reason", why)
	if err != nil {
		return fmt.Errorf("felix/engine: closing %s shard %d: %w", s.info.ID, i, err)
	}
	return nil
}

// movedAway is what ends the subscriptions of a shard no longer held: a
// *NotLeaderError naming the leader when Ownership knows one, so a client
// follows it, and with no leader when it knows none (not_leader, ask again
// later: the shard went elsewhere, this broker is not shutting down).
func (e *Engine) movedAway(id StreamID, shard int) error {
	leader := ""
	if local, l := e.owner.Leader(id, shard); !local {
		leader = l
	}
	return &NotLeaderError{Stream: id, Shard: shard, Leader: leader}
}
