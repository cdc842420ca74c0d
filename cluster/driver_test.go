package cluster_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/felixbroker/felix/cluster"
)

// driver plays the control plane's driver over a fakeStore: each change
// is written to the store, then stepped as the store's watch would deliver
// it; drained writes wait until the test answers them.
type driver struct {
	t        testing.TB
	m        *cluster.Machine
	store    *fakeStore
	inflight map[uint64]cluster.Action // drained writes and deletes not answered yet
	drained  []cluster.Action          // every action drained, in order
	racks    map[string]string         // every broker's rack as it last registered
	failed   int                       // writes whose compare failed
}

func newDriver(t testing.TB, epoch int64) *driver {
	d := &driver{t: t, store: newFakeStore(), inflight: map[uint64]cluster.Action{}, racks: map[string]string{}}
	d.restart(epoch)
	return d
}

// restart is a new control plane elected at epoch, over the same store.
func (d *driver) restart(epoch int64) {
	m, err := cluster.New(cluster.Config{Epoch: epoch})
	if err != nil {
		d.t.Fatal(err)
	}
	d.m = m
	clear(d.inflight)
}

func (d *driver) step(ev cluster.Event) error { return d.m.Step(ev) }

func (d *driver) join(b cluster.Broker) error {
	d.store.revision++
	d.store.brokers[b.ID] = b
	d.racks[b.ID] = b.Rack
	return d.step(cluster.BrokerJoined{Broker: b})
}

func (d *driver) leave(id, disk string) error {
	if b, ok := d.store.brokers[id]; ok && (disk == "" || disk == b.DiskID) {
		d.store.revision++
		delete(d.store.brokers, id)
	}
	return d.step(cluster.BrokerLeft{ID: id, DiskID: disk})
}

// create stores the object (a new incarnation unless it exists) and
// steps it as stored.
func (d *driver) create(spec cluster.ObjectSpec) error {
	if _, ok := d.store.objects[spec.ID]; !ok {
		d.store.revision++
		spec.Incarnation = d.store.revision
		d.store.objects[spec.ID] = spec
	}
	spec.Incarnation = d.store.objects[spec.ID].Incarnation
	return d.step(cluster.ObjectCreated{Spec: spec})
}

func (d *driver) remove(id cluster.ObjectID) error {
	d.store.revision++
	delete(d.store.objects, id)
	return d.step(cluster.ObjectDeleted{ID: id})
}

// resync steps the store's state, as asked by a Resync.
func (d *driver) resync() error { return d.step(d.store.snapshot()) }

// answer carries out the drained write numbered seq against the store and
// steps its outcome.
func (d *driver) answer(seq uint64) error {
	a, ok := d.inflight[seq]
	if !ok {
		d.t.Fatalf("no write %d in flight", seq)
	}
	delete(d.inflight, seq)
	if rev, ok := d.store.apply(a); ok {
		return d.step(cluster.WriteDone{Seq: seq, Revision: rev})
	}
	d.failed++
	return d.step(cluster.WriteFailed{Seq: seq})
}

// answerAll answers every write in flight, oldest first.
func (d *driver) answerAll() error {
	for _, seq := range slices.Sorted(maps.Keys(d.inflight)) {
		if err := d.answer(seq); err != nil {
			return err
		}
	}
	return nil
}

// ready drains the machine, keeping its writes in flight.
func (d *driver) ready() []cluster.Action {
	acts := d.m.Ready()
	for _, a := range acts {
		switch a := a.(type) {
		case cluster.Write:
			d.inflight[a.Seq] = a
		case cluster.Delete:
			d.inflight[a.Seq] = a
		}
	}
	d.drained = append(d.drained, acts...)
	return acts
}

// settle answers writes and resyncs until the machine asks for nothing.
func (d *driver) settle() error {
	for range 100 {
		d.ready()
		if len(d.inflight) == 0 && d.m.Synced() {
			return nil
		}
		if err := d.answerOrResync(); err != nil {
			return err
		}
	}
	d.t.Fatal("the machine did not settle in 100 rounds")
	return nil
}

// answerOrResync answers the writes in flight; if the machine wants a
// Resync, it then reads the store, as a driver lets the writes in flight
// answer before it reads (the machine ignores their outcomes).
func (d *driver) answerOrResync() error {
	if err := d.answerAll(); err != nil || d.m.Synced() {
		return err
	}
	d.ready()
	return d.resync()
}
