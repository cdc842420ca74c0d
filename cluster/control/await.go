package control

import (
	"context"
	"errors"
	"fmt"

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
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	wait := c.cfg.Clock.AfterFunc(c.cfg.PlaceWait, func() {
		cancel(fmt.Errorf("%w: %v, %v", ErrNotPlaced, spec.ID, c.cfg.PlaceWait))
	})
	defer wait.Stop()
	for {
		err := c.await(ctx, spec)
		if !errors.Is(err, store.ErrCompacted) {
			return causeOf(ctx, err)
		}
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
// unplaced.
func (c *Catalog) await(ctx context.Context, spec cluster.ObjectSpec) error {
	prefix := PlacementPrefix(spec.ID)
	kvs, rev, err := c.cfg.Store.Range(ctx, prefix)
	if err != nil {
		return err
	}
	p := placement{spec: spec, placed: map[int]bool{}}
	for _, kv := range kvs {
		p.put(kv)
	}
	if done, err := p.done(); done {
		return err
	}
	w, err := c.cfg.Store.Watch(ctx, prefix, rev+1)
	if err != nil {
		return err
	}
	defer w.Close()
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

// placement is what the store says of one incarnation's placement.
type placement struct {
	spec     cluster.ObjectSpec
	placed   map[int]bool // shards with an assignment for the incarnation
	unplaced *UnplacedReport
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
		p.placed[k.shard.Shard] = err == nil && a.Assignment.Incarnation == p.spec.Incarnation
	case keyUnplaced:
		u, err := decodeUnplaced(k.shard.Object, kv.Value)
		if p.unplaced = nil; err == nil && u.Incarnation == p.spec.Incarnation {
			p.unplaced = &u
		}
	}
}

// done says whether the wait is over, and with which answer.
func (p *placement) done() (bool, error) {
	n := 0
	for shard, ok := range p.placed {
		if ok && shard < p.spec.Shards {
			n++
		}
	}
	switch {
	case n == p.spec.Shards:
		return true, nil
	case p.unplaced != nil:
		return true, p.unplaced.Err()
	}
	return false, nil
}
