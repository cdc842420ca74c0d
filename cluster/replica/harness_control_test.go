package replica

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/failover"
	"github.com/felixbroker/felix/cluster/peer"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/netio/wire"
)

// testControl is the control plane of a test cluster: the real failover
// machine, driven over the in-memory peer network. It serves heartbeats
// (answering each with the machine's grant), sends the machine's fences
// and steps their answers, and keeps the assignments in a table it
// compare-and-swaps as the store would, telling the brokers their roles
// when one changes. One goroutine owns the machine.
type testControl struct {
	t       *testing.T
	id      string // its broker id on the network
	tr      *peer.Mem
	start   time.Time
	events  chan func()
	done    chan struct{}
	wg      sync.WaitGroup
	cluster *testCluster

	m       *failover.Machine
	store   *testStore // shared with every control plane of the cluster
	specs   map[cluster.ShardID]failover.Assigned
	replies map[heartbeatKey]peer.Reply
	writes  []cluster.StoredAssignment // every assignment written, in order

	// pauseAfter, when set (before the write, on the machine's
	// goroutine: cp.do), pauses the control plane right after a write it
	// returns true for has been stored and told to the brokers: its
	// goroutine stops and the network holds its messages, as a SIGSTOP
	// would, until resume. paused is closed once it has stopped.
	pauseAfter func(cluster.StoredAssignment) bool
	paused     chan struct{}
	resumed    chan struct{}
}

// testStore is the store the control planes of a cluster share: each
// shard's assignment, compare-and-swapped on its revision and guarded by
// the elected control plane's epoch, as etcd's If(CreateRevision(
// electionKey) == rev) guards a real one.
type testStore struct {
	mu    sync.Mutex
	table map[cluster.ShardID]cluster.StoredAssignment
	rev   int64
	epoch int64 // the elected control plane's: a write of another epoch fails
}

type heartbeatKey struct {
	broker string
	seq    uint64
}

const controlID = "cp"

func newTestControl(t *testing.T, c *testCluster, epoch int64) *testControl {
	return newTestControlOn(t, c, controlID, epoch, &testStore{table: map[cluster.ShardID]cluster.StoredAssignment{}, epoch: epoch})
}

// newTestControlOn starts a control plane of epoch as broker id on the
// network, over store.
func newTestControlOn(t *testing.T, c *testCluster, id string, epoch int64, store *testStore) *testControl {
	tr, err := c.net.Join(id)
	if err != nil {
		t.Fatal(err)
	}
	cp := &testControl{t: t, id: id, tr: tr, start: time.Now(), events: make(chan func(), 64), done: make(chan struct{}),
		cluster: c, store: store, specs: map[cluster.ShardID]failover.Assigned{},
		replies: map[heartbeatKey]peer.Reply{}, paused: make(chan struct{}), resumed: make(chan struct{})}
	cp.m, err = failover.New(failover.Config{Epoch: epoch, Lease: c.lease, Now: 0})
	if err != nil {
		t.Fatal(err)
	}
	tr.Handle(peer.HandlerFunc(cp.serve))
	cp.wg.Add(1)
	go cp.run()
	return cp
}

func (cp *testControl) now() time.Duration { return time.Since(cp.start) }

// place stores a first assignment, as placement would, and steps it.
func (cp *testControl) place(id cluster.ShardID, a cluster.Assignment, consistency failover.Consistency, acksDurable bool) {
	cp.do(func() {
		cp.store.mu.Lock()
		cp.store.rev++
		stored := cluster.StoredAssignment{Shard: id, Assignment: a, Revision: cp.store.rev}
		cp.store.table[id] = stored
		cp.store.mu.Unlock()
		cp.specs[id] = failover.Assigned{Stored: stored, ReplicationFactor: len(a.Replicas), Consistency: consistency,
			AcksDurable: acksDurable}
		cp.step(cp.specs[id])
	})
}

// do runs f on the machine's goroutine and waits for it.
func (cp *testControl) do(f func()) {
	ran := make(chan struct{})
	cp.events <- func() { f(); close(ran) }
	<-ran
}

// assignment is the stored assignment of id.
func (cp *testControl) assignment(id cluster.ShardID) cluster.Assignment {
	var a cluster.Assignment
	cp.do(func() { a = cp.store.get(id).Assignment.Clone() })
	return a
}

// get is the stored assignment of id.
func (s *testStore) get(id cluster.ShardID) cluster.StoredAssignment {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.table[id]
}

// takeOver elects a control plane of epoch as broker id over this one's
// store, as a new etcd election would: writes of an older epoch fail from
// now on. It reads every stored assignment (the shards' consistency and
// replication factor from the cluster's specs), becomes the cluster's cp
// (c.cp), and the brokers heartbeat it. The old one goes on running,
// unless paused: it is closed with the cluster.
func (c *testCluster) takeOver(id string, epoch int64) *testControl {
	old := c.cp
	old.store.mu.Lock()
	old.store.epoch = epoch
	old.store.mu.Unlock()
	cp := newTestControlOn(c.t, c, id, epoch, old.store)
	cp.resync()
	c.others = append(c.others, old)
	c.cp = cp
	c.heartbeatTo(id)
	return cp
}

// resync steps an Assigned for every stored assignment, as a driver does
// when it starts or after a failed write.
func (cp *testControl) resync() {
	cp.do(func() {
		cp.store.mu.Lock()
		var all []cluster.StoredAssignment
		for _, s := range cp.store.table {
			all = append(all, s)
		}
		cp.store.mu.Unlock()
		slices.SortFunc(all, func(a, b cluster.StoredAssignment) int { return cmp.Compare(a.Shard.Shard, b.Shard.Shard) })
		for _, s := range all {
			spec := cp.cluster.shards[s.Shard]
			cp.specs[s.Shard] = failover.Assigned{Stored: s, ReplicationFactor: len(spec.replicas), Consistency: spec.consistency,
				AcksDurable: cp.cluster.fsync.Kind == shardlog.FsyncOnCommit}
			cp.step(cp.specs[s.Shard])
		}
	})
}

// pause stops the control plane's goroutine where it is (it is on it)
// until resume, its messages held on the network.
func (cp *testControl) pause() {
	cp.cluster.net.Freeze(cp.id)
	close(cp.paused)
	select {
	case <-cp.resumed:
	case <-cp.done:
	}
}

// resume lets a paused control plane go on.
func (cp *testControl) resume() {
	cp.cluster.net.Thaw(cp.id)
	close(cp.resumed)
}

func (cp *testControl) run() {
	defer cp.wg.Done()
	t := time.NewTicker(cp.cluster.lease / 8)
	defer t.Stop()
	for {
		select {
		case <-cp.done:
			return
		case f := <-cp.events:
			f()
		case <-t.C:
			cp.step(failover.Tick{Now: cp.now()})
		}
	}
}

func (cp *testControl) close() {
	close(cp.done)
	cp.wg.Wait()
	cp.tr.Close()
}

// step steps ev and carries out what the machine asks.
func (cp *testControl) step(ev failover.Event) {
	if err := cp.m.Step(ev); err != nil {
		cp.t.Errorf("control plane: %T: %v", ev, err)
	}
	for _, a := range cp.m.Ready() {
		switch a := a.(type) {
		case failover.Grant:
			cp.grant(a)
		case failover.Fence:
			cp.fence(a)
		case failover.Write:
			cp.write(a)
		}
	}
}

// serve takes a heartbeat off the network onto the machine's goroutine.
func (cp *testControl) serve(from string, req wire.Frame, r peer.Reply) {
	var h wire.Heartbeat
	if req.Type != wire.TypeHeartbeat || h.Decode(req, wire.Limits{}) != nil {
		answerError(r, wire.CodeMalformedFrame, "the control plane serves HEARTBEAT")
		return
	}
	ev := failover.Heartbeat{Broker: cluster.Replica{Broker: string(h.Broker), DiskID: string(h.DiskID)}, Seq: h.Seq}
	for _, rep := range h.Reports {
		ev.Reports = append(ev.Reports, failover.Report{Shard: shardOf(cloneRef(rep.Log)), Generation: rep.Generation,
			Leading: rep.Leading, LogEnd: rep.LogEnd, LastGen: uint32(rep.LastGen), Durable: rep.Durable,
			LeaderHeard: time.Duration(rep.LeaderHeard)})
	}
	select {
	case cp.events <- func() {
		ev.At = cp.now()
		cp.replies[heartbeatKey{ev.Broker.Broker, ev.Seq}] = r
		cp.step(ev)
	}:
	case <-cp.done:
	}
}

func (cp *testControl) grant(g failover.Grant) {
	key := heartbeatKey{g.To.Broker, g.HeartbeatSeq}
	r, ok := cp.replies[key]
	if !ok {
		return
	}
	delete(cp.replies, key)
	buf, w := wire.BeginLeaseGrant(nil, 0, g.HeartbeatSeq, g.Epoch, int64(g.Lease))
	for _, s := range g.Shards {
		buf = w.Granted(buf, wire.GrantedLog{Log: RefOf(s.Shard), Generation: s.Generation})
	}
	_ = r.Answer(w.Finish(buf))
}

// fence sends one fence and steps its answer when it comes.
func (cp *testControl) fence(f failover.Fence) {
	req := wire.AppendFence(nil, 0, wire.Fence{Log: RefOf(f.Shard), Generation: f.Generation, Epoch: f.Epoch})
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), cp.cluster.lease)
		defer cancel()
		answer, err := cp.tr.Call(ctx, f.To.Broker, req, nil)
		var ok wire.FenceOK
		if err != nil || answer.Type != wire.TypeFenceOK || ok.Decode(answer, wire.Limits{}) != nil {
			if err == nil && answer.Type == wire.TypeError {
				var e wire.Error
				_ = e.Decode(answer, wire.Limits{})
				err = &e
			}
			cp.t.Logf("fence of %v at %d by %s: %v", f.Shard, f.Generation, f.To.Broker, err)
			return // the machine sends it again
		}
		ev := failover.FenceReplied{Shard: f.Shard, From: f.To, Generation: ok.Generation, Epoch: ok.Epoch,
			LogEnd: ok.LogEnd, LastGen: uint32(ok.LastGen), Durable: ok.Durable,
			NewDisk: ok.Flags&wire.FenceNewDisk != 0, Clean: ok.Flags&wire.FenceClean != 0}
		select {
		case cp.events <- func() { cp.step(ev) }:
		case <-cp.done:
		}
	}()
}

// write compare-and-swaps the table, steps the outcome, and tells the
// brokers their new roles.
func (cp *testControl) write(w failover.Write) {
	cp.store.mu.Lock()
	cur := cp.store.table[w.Shard]
	if cur.Revision != w.ExpectedRevision || w.Epoch != cp.store.epoch {
		cp.store.mu.Unlock()
		cp.step(failover.WriteFailed{Seq: w.Seq})
		return
	}
	cp.store.rev++
	stored := cluster.StoredAssignment{Shard: w.Shard, Assignment: w.Assignment.Clone(), Revision: cp.store.rev}
	cp.store.table[w.Shard] = stored
	cp.store.mu.Unlock()
	cp.writes = append(cp.writes, stored)
	if cp.pauseAfter != nil && cp.pauseAfter(stored) {
		cp.pauseAfter = nil
		cp.cluster.apply(stored) // the brokers see the write when it lands, as from the store's watch
		cp.pause()
		cp.step(failover.WriteDone{Seq: w.Seq, Revision: stored.Revision})
		spec := cp.specs[w.Shard]
		spec.Stored = stored
		cp.specs[w.Shard] = spec
		cp.step(spec)
		return
	}
	spec := cp.specs[w.Shard]
	spec.Stored = stored
	cp.specs[w.Shard] = spec
	cp.step(failover.WriteDone{Seq: w.Seq, Revision: stored.Revision})
	cp.step(spec)
	cp.cluster.apply(stored)
}
