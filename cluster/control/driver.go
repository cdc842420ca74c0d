package control

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/store"
)

// errDeposed: the store refused a write because the election key no
// longer has this control plane's epoch.
var errDeposed = errors.New("felix/cluster/control: deposed (the epoch guard failed)")

// driver is one leadership term's IO around a cluster.Machine, as
// cluster/doc.go lists the caller's duties. One goroutine owns it.
type driver struct {
	store store.Store
	lead  *store.Leadership
	m     *cluster.Machine
	log   *slog.Logger
	watch store.Watch // of Root, from the last snapshot's revision + 1

	brokers  map[string]string           // registered broker -> its disk id, for BrokerLeft
	objects  map[cluster.ObjectID]int64  // catalog entries -> incarnation, for Unplaced reports
	reported map[cluster.ObjectID]bool   // objects with an unplaced report stored
	bad      map[cluster.ObjectID]string // objects left alone: their catalog or placement is malformed
}

// drive runs the Machine until ctx is done or the term ends: deposed (the
// epoch guard refused a write), the watch failed, or the store could not
// be read.
func drive(ctx context.Context, s store.Store, lead *store.Leadership, log *slog.Logger) error {
	m, err := cluster.New(cluster.Config{Epoch: lead.Epoch()})
	if err != nil {
		return err
	}
	d := &driver{store: s, lead: lead, m: m, log: log}
	defer d.closeWatch()
	for {
		if err := d.act(ctx); err != nil {
			return err
		}
		events, err := d.watch.Next(ctx)
		switch {
		case errors.Is(err, store.ErrCompacted):
			d.log.Info("control plane watch fell behind a compaction; reading the state again", "err", err)
			err = d.resync(ctx)
		case err == nil:
			err = d.apply(events)
		}
		if err != nil {
			return err
		}
	}
}

// act drains the Machine and carries out its actions until it asks for
// nothing, then removes the unplaced reports it no longer makes.
func (d *driver) act(ctx context.Context) error {
	for {
		actions := d.m.Ready()
		if len(actions) == 0 {
			return d.unreport(ctx)
		}
		if err := d.carryOut(ctx, actions); err != nil {
			return err
		}
	}
}

// carryOut sends the actions' writes, in batches that end at each Resync
// (the writes before it answer first, as the Machine asks), and steps
// their outcomes.
func (d *driver) carryOut(ctx context.Context, actions []cluster.Action) error {
	var jobs []job
	for _, a := range actions {
		switch a := a.(type) {
		case cluster.Write:
			jobs = append(jobs, writeJob(a))
		case cluster.Delete:
			jobs = append(jobs, deleteJob(a))
		case cluster.Unplaced:
			if inc, ok := d.objects[a.Object]; ok {
				jobs = append(jobs, reportJob(a, inc, d.lead.Epoch()))
			}
		case cluster.Resync:
			if err := d.run(ctx, jobs); err != nil {
				return err
			}
			jobs = nil
			if err := d.resync(ctx); err != nil {
				return err
			}
		}
	}
	return d.run(ctx, jobs)
}

// run sends jobs and steps what became of them, in order.
func (d *driver) run(ctx context.Context, jobs []job) error {
	send(ctx, d.lead, jobs)
	for i := range jobs {
		j := &jobs[i]
		if j.deposed() {
			return fmt.Errorf("%w: %w", errDeposed, j.err)
		}
		if err := context.Cause(ctx); err != nil {
			return err
		}
		d.settled(j)
		if ev := j.outcome(); ev != nil {
			if err := d.m.Step(ev); err != nil {
				panic(fmt.Sprintf("felix/cluster/control: bug: the machine refused the outcome %#v: %v", ev, err))
			}
		}
	}
	return nil
}

// settled notes what a report's job left stored.
func (d *driver) settled(j *job) {
	if j.err != nil || !j.res.Succeeded {
		return
	}
	switch j.action.(type) {
	case cluster.Unplaced:
		d.reported[j.object] = true
	case nil:
		delete(d.reported, j.object)
	}
}

// unreport removes the stored reports of objects the Machine no longer
// reports as unplaced (placed now, or gone). Status costs a copy of every
// shard, so it is read only while some report is stored.
func (d *driver) unreport(ctx context.Context) error {
	if len(d.reported) == 0 {
		return nil
	}
	still := map[cluster.ObjectID]bool{}
	for _, u := range d.m.Status().Unplaced {
		still[u.Object] = true
	}
	var jobs []job
	for id := range d.reported {
		if !still[id] {
			jobs = append(jobs, unreportJob(id))
		}
	}
	return d.run(ctx, jobs)
}

// resync reads the whole state at one revision R, steps it as a Snapshot
// and watches from R+1.
func (d *driver) resync(ctx context.Context) error {
	d.closeWatch()
	kvs, rev, err := d.store.Range(ctx, Root)
	if err != nil {
		return err
	}
	if err := d.m.Step(d.snapshot(kvs)); err != nil {
		return fmt.Errorf("felix/cluster/control: the store's state at revision %d: %w", rev, err)
	}
	d.watch, err = d.store.Watch(ctx, Root, rev+1)
	return err
}

func (d *driver) closeWatch() {
	if d.watch != nil {
		d.watch.Close()
		d.watch = nil
	}
}
