package control

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/store"
)

// AwaitPlaced waits until every shard of the object's incarnation has an
// assignment (nil), or the control plane reports the incarnation
// unplaced (its reason, matching cluster.ErrTooFewBrokers), within ctx and
// the catalog's PlaceWait (ErrNotPlaced). It reads the object's placement
// prefix once, then follows it with a watch; a report already stored
// answers at once, even if the brokers that would place it have just
// joined.
func (c *Catalog) AwaitPlaced(ctx context.Context, spec cluster.ObjectSpec) error {
	ctx, stop := c.bounded(ctx, spec.ID)
	defer stop()
	return causeOf(ctx, c.await(ctx, spec))
}

// bounded is ctx, also ended PlaceWait from now with ErrNotPlaced.
func (c *Catalog) bounded(ctx context.Context, id cluster.ObjectID) (context.Context, func()) {
	return withWait(ctx, c.cfg.Clock, c.cfg.PlaceWait, func() error {
		return fmt.Errorf("%w: %v, %v", ErrNotPlaced, id, c.cfg.PlaceWait)
	})
}

// withWait is ctx, also ended d from now on clock with cause's error (on
// the clock, not the context package's timers, so a test's manual clock
// times it too). The func releases it.
func withWait(ctx context.Context, clock store.Clock, d time.Duration, cause func() error) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	wait := clock.AfterFunc(d, func() { cancel(cause()) })
	return ctx, func() {
		wait.Stop()
		cancel(nil)
	}
}

// causeOf is err, or when ctx ended it, why ctx ended.
func causeOf(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return err
}

// await reads, then watches, the placement prefix until it says placed or
// unplaced; it reads again when the watch falls behind a compaction.
func (c *Catalog) await(ctx context.Context, spec cluster.ObjectSpec) error {
	for {
		kvs, rev, err := c.cfg.Store.Range(ctx, PlacementPrefix(spec.ID))
		if err != nil {
			return err
		}
		p := newPlacement(spec)
		for _, kv := range kvs {
			p.put(kv)
		}
		if done, err := p.done(); done {
			return err
		}
		w, err := c.cfg.Store.Watch(ctx, PlacementPrefix(spec.ID), rev+1)
		if err != nil {
			return err
		}
		err = p.follow(ctx, w)
		w.Close()
		if !errors.Is(err, store.ErrCompacted) {
			return err
		}
	}
}

// placement is what the store says of one incarnation's placement.
type placement struct {
	spec     cluster.ObjectSpec
	placed   map[int]bool // the shards (below spec.Shards) with an assignment for the incarnation
	unplaced *UnplacedReport
}

func newPlacement(spec cluster.ObjectSpec) *placement {
	return &placement{spec: spec, placed: map[int]bool{}}
}

// follow applies the watch until the placement is done, or the watch
// fails.
func (p *placement) follow(ctx context.Context, w store.Watch) error {
	for {
		events, err := w.Next(ctx)
		if err != nil {
			return err
		}
		for _, ev := range events {
			p.apply(ev)
		}
		if done, err := p.done(); done {
			return err
		}
	}
}

func (p *placement) apply(ev store.Event) {
	if ev.Kind == store.EventPut {
		p.put(ev.KV)
		return
	}
	k, err := parseKey(ev.KV.Key)
	switch {
	case err != nil:
	case k.kind == keyAssignment:
		delete(p.placed, k.shard.Shard)
	case k.kind == keyUnplaced:
		p.unplaced = nil
	}
}

// put takes a key's value; one this format cannot read counts as absent.
func (p *placement) put(kv store.KV) {
	k, err := parseKey(kv.Key)
	if err != nil {
		return
	}
	switch k.kind {
	case keyAssignment:
		a, err := decodeAssignment(k.shard, kv)
		if err == nil && a.Assignment.Incarnation == p.spec.Incarnation && k.shard.Shard < p.spec.Shards {
			p.placed[k.shard.Shard] = true
		} else {
			delete(p.placed, k.shard.Shard)
		}
	case keyUnplaced:
		u, err := decodeUnplaced(k.shard.Object, kv.Value)
		if p.unplaced = nil; err == nil && u.Incarnation == p.spec.Incarnation {
			p.unplaced = &u
		}
	}
}

// done says whether the wait is over, and with which answer.
func (p *placement) done() (bool, error) {
	switch {
	case len(p.placed) == p.spec.Shards:
		return true, nil
	case p.unplaced != nil:
		return true, p.unplaced.Err()
	}
	return false, nil
}
