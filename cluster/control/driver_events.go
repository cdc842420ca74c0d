package control

import (
	"errors"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/store"
)

// snapshot turns a Range of Root into the Machine's Snapshot, and resets
// what the driver keeps beside the Machine. What it cannot read is left
// out and logged: a registration (that broker is not live), and an object
// whose catalog entry or any assignment is malformed, together with all
// its assignments (placing around them could overwrite what another
// writer meant; they stay as they are until the store is repaired).
func (d *driver) snapshot(kvs []store.KV) cluster.Snapshot {
	d.brokers = map[string]string{}
	d.objects = map[cluster.ObjectID]int64{}
	d.reported = map[cluster.ObjectID]bool{}
	d.bad = map[cluster.ObjectID]string{}
	var snap cluster.Snapshot
	for _, kv := range kvs {
		d.read(&snap, kv)
	}
	return d.withoutBad(snap)
}

// read adds one key of the state to snap.
func (d *driver) read(snap *cluster.Snapshot, kv store.KV) {
	k, err := parseKey(kv.Key)
	if err != nil {
		d.log.Error("control plane: a key it cannot read", "key", kv.Key, "err", err)
		return
	}
	switch k.kind {
	case keyBroker:
		if b, ok := d.decodeBroker(k.broker, kv.Value); ok {
			snap.Brokers = append(snap.Brokers, b)
		}
	case keyCatalog:
		e, err := decodeEntry(k.shard.Object, kv)
		if d.markBad(k.shard.Object, kv.Key, err) {
			return
		}
		d.objects[e.Object] = e.Incarnation
		snap.Objects = append(snap.Objects, e.Spec())
	case keyAssignment:
		a, err := decodeAssignment(k.shard, kv)
		if d.markBad(k.shard.Object, kv.Key, err) {
			return
		}
		snap.Assignments = append(snap.Assignments,
			cluster.StoredAssignment{Shard: a.Shard, Assignment: a.Assignment, Revision: a.Revision})
	case keyUnplaced:
		d.reported[k.shard.Object] = true
	}
}

func (d *driver) decodeBroker(id string, value []byte) (cluster.Broker, bool) {
	b, err := decodeBroker(id, value)
	if err != nil {
		d.log.Error("control plane: a broker registration it cannot read; the broker is not live", "broker", id, "err", err)
		return cluster.Broker{}, false
	}
	d.brokers[b.ID] = b.DiskID
	return b, true
}

// markBad records an object left alone because of err, if there is one.
func (d *driver) markBad(id cluster.ObjectID, key string, err error) bool {
	if err == nil {
		return false
	}
	if _, seen := d.bad[id]; !seen {
		d.log.Error("control plane: an object it cannot read is left alone, with its assignments", "object", id.String(),
			"key", key, "err", err)
	}
	d.bad[id] = err.Error()
	return true
}

// withoutBad drops the objects left alone from the snapshot.
func (d *driver) withoutBad(snap cluster.Snapshot) cluster.Snapshot {
	if len(d.bad) == 0 {
		return snap
	}
	objects := snap.Objects[:0]
	for _, o := range snap.Objects {
		if _, bad := d.bad[o.ID]; !bad {
			objects = append(objects, o)
		}
	}
	assignments := snap.Assignments[:0]
	for _, a := range snap.Assignments {
		if _, bad := d.bad[a.Shard.Object]; !bad {
			assignments = append(assignments, a)
		}
	}
	for id := range d.bad {
		delete(d.objects, id)
	}
	snap.Objects, snap.Assignments = objects, assignments
	return snap
}

// apply steps the changes a watch delivered. A change the Machine refuses
// (ErrInvalidEvent) is logged and left out: the Machine is unchanged by it.
func (d *driver) apply(events []store.Event) error {
	for _, ev := range events {
		me, ok := d.event(ev)
		if !ok {
			continue
		}
		if err := d.m.Step(me); err != nil {
			if !errors.Is(err, cluster.ErrInvalidEvent) {
				return err
			}
			d.log.Error("control plane: a change it cannot apply", "key", ev.KV.Key, "err", err)
		}
	}
	return nil
}

// event is the Machine's event for a change of the store, if it has one.
func (d *driver) event(ev store.Event) (cluster.Event, bool) {
	k, err := parseKey(ev.KV.Key)
	if err != nil {
		d.log.Error("control plane: a key it cannot read", "key", ev.KV.Key, "err", err)
		return nil, false
	}
	put := ev.Kind == store.EventPut
	switch k.kind {
	case keyBroker:
		return d.brokerEvent(k.broker, ev, put)
	case keyCatalog:
		return d.catalogEvent(k.shard.Object, ev, put)
	case keyUnplaced:
		if put {
			d.reported[k.shard.Object] = true
		} else {
			delete(d.reported, k.shard.Object)
		}
	}
	return nil, false
}

// brokerEvent is BrokerJoined for a registration, and BrokerLeft for one
// that went or that cannot be read (that broker is not live), naming the
// disk it was registered with.
func (d *driver) brokerEvent(id string, ev store.Event, put bool) (cluster.Event, bool) {
	if put {
		if b, ok := d.decodeBroker(id, ev.KV.Value); ok {
			return cluster.BrokerJoined{Broker: b}, true
		}
	}
	disk, known := d.brokers[id]
	delete(d.brokers, id)
	return cluster.BrokerLeft{ID: id, DiskID: disk}, known || !put
}

// catalogEvent is ObjectCreated or ObjectDeleted; nothing for an object
// left alone (a later snapshot reads it again).
func (d *driver) catalogEvent(id cluster.ObjectID, ev store.Event, put bool) (cluster.Event, bool) {
	if _, bad := d.bad[id]; bad {
		return nil, false
	}
	if !put {
		delete(d.objects, id)
		return cluster.ObjectDeleted{ID: id}, true
	}
	e, err := decodeEntry(id, ev.KV)
	if err != nil {
		d.log.Error("control plane: a catalog entry it cannot read is left alone", "object", id.String(), "err", err)
		return nil, false
	}
	d.objects[id] = e.Incarnation
	return cluster.ObjectCreated{Spec: e.Spec()}, true
}
