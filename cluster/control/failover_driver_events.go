package control

import (
	"context"
	"errors"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/failover"
	"github.com/felixbroker/felix/cluster/store"
	"github.com/felixbroker/felix/engine"
)

// follow reads the state at one revision, hands it to the driver's
// goroutine, and watches from the next revision on, handing each batch
// over; a watch that fell behind a compaction reads again. An error of
// the store's ends the term (handed over as the driver's error).
func (d *FailoverDriver) follow(ctx context.Context) {
	for ctx.Err() == nil {
		kvs, rev, err := d.store.Range(ctx, Root)
		if err != nil {
			d.fail(ctx, err)
			return
		}
		if !d.hand(ctx, func() error { d.snapshot(ctx, kvs); return nil }) {
			return
		}
		w, err := d.store.Watch(ctx, Root, rev+1)
		if err != nil {
			d.fail(ctx, err)
			return
		}
		err = d.forward(ctx, w)
		w.Close()
		if !errors.Is(err, store.ErrCompacted) {
			d.fail(ctx, err)
			return
		}
		d.log.Info("control plane failover: the watch fell behind a compaction; reading the state again", "err", err)
	}
}

// forward hands the watch's batches over until it fails or the term ends.
func (d *FailoverDriver) forward(ctx context.Context, w store.Watch) error {
	for {
		events, err := w.Next(ctx)
		if err != nil {
			return err
		}
		if !d.hand(ctx, func() error { d.apply(ctx, events); return nil }) {
			return ctx.Err()
		}
	}
}

// fail hands err over as the term's end, unless the term ended already.
func (d *FailoverDriver) fail(ctx context.Context, err error) {
	if ctx.Err() == nil && err != nil {
		d.hand(ctx, func() error { return err })
	}
}

// snapshot steps every assignment of a Range of Root as Assigned, with
// its object's catalog entry, and Removed for every shard known before
// that is gone.
func (d *FailoverDriver) snapshot(ctx context.Context, kvs []store.KV) {
	d.objects = map[cluster.ObjectID]objectFailover{}
	var assignments []store.KV
	for _, kv := range kvs {
		k, err := parseKey(kv.Key)
		switch {
		case err != nil:
			d.log.Error("control plane failover: a key it cannot read", "key", kv.Key, "err", err)
		case k.kind == keyCatalog:
			d.catalogPut(k.shard.Object, kv)
		case k.kind == keyAssignment:
			assignments = append(assignments, kv)
		}
	}
	present := map[cluster.ShardID]bool{}
	for _, kv := range assignments {
		k, _ := parseKey(kv.Key)
		present[k.shard] = true
		d.assignmentPut(ctx, k.shard, kv)
	}
	for id := range d.known {
		if !present[id] {
			d.removed(ctx, id)
		}
	}
}

// apply steps the changes of the assignments, and keeps the catalog's.
func (d *FailoverDriver) apply(ctx context.Context, events []store.Event) {
	for _, ev := range events {
		k, err := parseKey(ev.KV.Key)
		if err != nil {
			d.log.Error("control plane failover: a key it cannot read", "key", ev.KV.Key, "err", err)
			continue
		}
		put := ev.Kind == store.EventPut
		switch {
		case k.kind == keyCatalog && put:
			d.catalogPut(k.shard.Object, ev.KV)
		case k.kind == keyCatalog:
			delete(d.objects, k.shard.Object)
		case k.kind == keyAssignment && put:
			d.assignmentPut(ctx, k.shard, ev.KV)
		case k.kind == keyAssignment:
			d.removed(ctx, k.shard)
		}
	}
}

// catalogPut keeps what the machine needs of an object's entry.
func (d *FailoverDriver) catalogPut(id cluster.ObjectID, kv store.KV) {
	e, err := decodeEntry(id, kv)
	if err != nil {
		delete(d.objects, id)
		d.log.Error("control plane failover: a catalog entry it cannot read; its shards are left alone", "object", id.String(), "err", err)
		return
	}
	d.objects[id] = failoverOf(e)
}

// failoverOf is a catalog entry's replication factor and consistency, a
// stream's or a cache's as configured (a cache's Leader unless created at
// Quorum, when its writes are acknowledged once a majority holds them). Only an object of more than one replica is
// replicated, so only its shards have leases and fail over: the others
// stay with their one replica, which no broker heartbeats.
func failoverOf(e Entry) objectFailover {
	spec := e.Spec()
	o := objectFailover{replicationFactor: spec.ReplicationFactor, consistency: failover.Leader,
		replicated: spec.ReplicationFactor > 1 && (e.Stream != nil || e.Cache != nil)}
	// An object without its own FsyncMode takes the brokers': not known
	// here, so not counted as acknowledging durably.
	switch {
	case e.Stream != nil:
		o.acksDurable = e.Stream.Fsync.Kind == "OnCommit"
		if e.Stream.Consistency == engine.ConsistencyQuorum {
			o.consistency = failover.Quorum
		}
	case e.Cache != nil:
		o.acksDurable = e.Cache.Fsync.Kind == "OnCommit"
		if e.Cache.Consistency == engine.ConsistencyQuorum {
			o.consistency = failover.Quorum
		}
	}
	return o
}

// assignmentPut steps a stored assignment as Assigned, with its object's
// catalog entry; one it cannot read, or whose object it does not know, is
// logged and left out.
func (d *FailoverDriver) assignmentPut(ctx context.Context, id cluster.ShardID, kv store.KV) {
	a, err := decodeAssignment(id, kv)
	if err != nil {
		d.log.Error("control plane failover: an assignment it cannot read is left alone", "key", kv.Key, "err", err)
		return
	}
	o, ok := d.objects[id.Object]
	if !ok {
		d.log.Warn("control plane failover: an assignment of an object without a catalog entry is left alone", "key", kv.Key)
		return
	}
	if !o.replicated {
		// One replica: nothing to fail over to, and no broker
		// heartbeats it. Its leader keeps it.
		if d.known[id] {
			d.removed(ctx, id)
		}
		return
	}
	d.known[id] = true
	d.step(ctx, failover.Assigned{Stored: cluster.StoredAssignment{Shard: id, Assignment: a.Assignment, Revision: a.Revision},
		ReplicationFactor: o.replicationFactor, Consistency: o.consistency, AcksDurable: o.acksDurable})
}

func (d *FailoverDriver) removed(ctx context.Context, id cluster.ShardID) {
	delete(d.known, id)
	d.step(ctx, failover.Removed{Shard: id})
}
