package control

import (
	"context"
	"errors"
	"sync"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/store"
)

// writesInFlightMax bounds the guarded txns a control plane sends at once:
// etcd commits concurrent proposals in one fsync, so a stream of many
// shards is placed in a few disk syncs, not one per shard.
const writesInFlightMax = 16

// job is one guarded txn the driver sends for an action, and what became
// of it.
type job struct {
	action cluster.Action // Write, Delete or Unplaced; nil for a report's removal
	object cluster.ObjectID
	txn    store.Txn

	res store.TxnResult
	err error
}

func writeJob(a cluster.Write) job {
	key := AssignmentKey(a.Shard)
	return job{action: a, object: a.Shard.Object, txn: store.Txn{
		If:   []store.Cmp{store.ModRevisionIs(key, a.ExpectedRevision)},
		Then: []store.Op{store.Put(key, encodeAssignment(a.Assignment, a.Epoch))},
	}}
}

func deleteJob(a cluster.Delete) job {
	key := AssignmentKey(a.Shard)
	return job{action: a, object: a.Shard.Object, txn: store.Txn{
		If:   []store.Cmp{store.ModRevisionIs(key, a.ExpectedRevision)},
		Then: []store.Op{store.Delete(key)},
	}}
}

// reportJob stores an Unplaced report, only while the object's catalog
// entry is still the incarnation it is about.
func reportJob(u cluster.Unplaced, incarnation, epoch int64) job {
	report := UnplacedReport{Object: u.Object, Needed: u.Needed, Live: u.Live, Incarnation: incarnation, Epoch: epoch}
	return job{action: u, object: u.Object, txn: store.Txn{
		If:   []store.Cmp{store.CreateRevisionIs(CatalogKey(u.Object), incarnation)},
		Then: []store.Op{store.Put(UnplacedKey(u.Object), encodeUnplaced(report))},
	}}
}

// unreportJob removes a report the machine no longer makes.
func unreportJob(id cluster.ObjectID) job {
	return job{object: id, txn: store.Txn{Then: []store.Op{store.Delete(UnplacedKey(id))}}}
}

// send carries out the jobs under the leadership's guard, at most
// writesInFlightMax at once, and returns when every one has answered.
func send(ctx context.Context, lead *store.Leadership, jobs []job) {
	sem := make(chan struct{}, writesInFlightMax)
	var wg sync.WaitGroup
	for i := range jobs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			j := &jobs[i]
			j.res, j.err = lead.Txn(ctx, j.txn)
		})
	}
	wg.Wait()
}

// outcome is the event a Write's or Delete's answer is for the machine:
// WriteDone when it was applied, WriteFailed when its compare failed or
// its outcome is unknown.
func (j *job) outcome() cluster.Event {
	seq := uint64(0)
	switch a := j.action.(type) {
	case cluster.Write:
		seq = a.Seq
	case cluster.Delete:
		seq = a.Seq
	default:
		return nil
	}
	if j.err == nil && j.res.Succeeded {
		return cluster.WriteDone{Seq: seq, Revision: j.res.Revision}
	}
	return cluster.WriteFailed{Seq: seq}
}

// deposed reports whether the epoch guard refused the job.
func (j *job) deposed() bool { return errors.Is(j.err, store.ErrNotLeader) }
