package failover_test

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/failover"
)

// world drives a machine with a fake store (compare-and-swap on
// revisions), brokers that heartbeat, die and come back, and fence
// answers, all drawn from a seed. It checks every batch of actions as it
// comes (checks.go has the invariants).
type world struct {
	t        testing.TB
	r        *rand.Rand
	restarts bool // a new control plane may take over

	m       *failover.Machine
	epoch   int64
	started time.Duration
	now     time.Duration

	rev     int64
	store   map[cluster.ShardID]cluster.StoredAssignment
	specs   []worldShard
	brokers []cluster.Replica
	alive   map[cluster.Replica]bool
	beats   uint64

	pending []failover.Write // sent, not answered
	fences  []failover.Fence // sent, not answered

	events  []failover.Event  // every event stepped, in order
	actions []failover.Action // every action drained, in order
	checks  checks
}

type worldShard struct {
	id cluster.ShardID
	c  failover.Consistency
}

func newWorld(t testing.TB, seed uint64, restarts bool) *world {
	w := &world{t: t, r: rand.New(rand.NewPCG(seed, seed^0x5eed)), restarts: restarts,
		store: map[cluster.ShardID]cluster.StoredAssignment{}, alive: map[cluster.Replica]bool{}}
	w.brokers = []cluster.Replica{ra, rb, rc, rd, re}
	for _, b := range w.brokers {
		w.alive[b] = true
	}
	sets := [][]cluster.Replica{{ra, rb, rc}, {rb, rc, rd}, {rc}, {ra, rb, rc, rd, re}}
	for i, set := range sets {
		ws := worldShard{id: shardN(i), c: failover.Quorum}
		if i%2 == 1 {
			ws.c = failover.Leader
		}
		w.specs = append(w.specs, ws)
		w.rev++
		w.store[ws.id] = cluster.StoredAssignment{Shard: ws.id, Revision: w.rev,
			Assignment: cluster.Assignment{Replicas: set, Leader: set[0], Generation: 1, Incarnation: 1}}
	}
	w.checks = newChecks()
	w.takeOver()
	return w
}

// takeOver starts a new control plane at the current time: writes and
// fences of the old one are lost (its epoch no longer passes the guard).
func (w *world) takeOver() {
	w.epoch++
	m, err := failover.New(failover.Config{Epoch: w.epoch, Lease: lease, Now: w.now})
	if err != nil {
		w.t.Fatal(err)
	}
	w.m, w.started, w.pending, w.fences = m, w.now, nil, nil
	w.checks.newMachine(w)
	for _, s := range w.specs {
		w.assigned(s.id)
	}
}

func (w *world) run(steps int) {
	for range steps {
		switch n := w.r.IntN(100); {
		case n < 30:
			w.now += time.Duration(w.r.Int64N(int64(lease / 3)))
			w.step(failover.Tick{Now: w.now})
		case n < 60:
			w.heartbeat(w.brokers[w.r.IntN(len(w.brokers))])
		case n < 75:
			w.answerWrite()
		case n < 90:
			w.answerFence()
		case n < 95:
			b := w.brokers[w.r.IntN(len(w.brokers))]
			w.alive[b] = !w.alive[b]
		case n < 96:
			w.replaceDisk(w.r.IntN(len(w.brokers)))
		case n < 98:
			w.assigned(w.specs[w.r.IntN(len(w.specs))].id) // a redelivery
		case w.restarts:
			w.takeOver()
		}
	}
}

// step applies ev and checks what it caused.
func (w *world) step(ev failover.Event) []failover.Action {
	w.t.Helper()
	if err := w.m.Step(ev); err != nil {
		w.t.Fatalf("step %#v: %v", ev, err)
	}
	w.events = append(w.events, ev)
	acts := w.m.Ready()
	w.actions = append(w.actions, acts...)
	for _, a := range acts {
		switch a := a.(type) {
		case failover.Write:
			w.checks.write(w, a)
			w.pending = append(w.pending, a)
		case failover.Fence:
			w.fences = append(w.fences, a)
		case failover.Grant:
			w.checks.grant(w, a)
		}
	}
	return acts
}

func (w *world) assigned(id cluster.ShardID) {
	sa := w.store[id]
	sa.Assignment = sa.Assignment.Clone()
	c := failover.Quorum
	if id.Shard%2 == 1 {
		c = failover.Leader
	}
	w.step(failover.Assigned{Stored: sa, ReplicationFactor: len(sa.Assignment.Replicas), Consistency: c})
}

// replaceDisk brings broker i back on a new disk: its old replicas are
// gone for good, and it heartbeats from the new one.
func (w *world) replaceDisk(i int) {
	old := w.brokers[i]
	w.alive[old] = false
	w.brokers[i] = cluster.Replica{Broker: old.Broker, DiskID: old.DiskID + "+"}
	w.alive[w.brokers[i]] = true
	w.heartbeat(w.brokers[i])
}

// heartbeat sends a broker's reports: mostly at the stored generation,
// sometimes lagging or ahead of it; followers sometimes cannot hear.
func (w *world) heartbeat(b cluster.Replica) {
	if !w.alive[b] {
		return
	}
	w.beats++
	hb := failover.Heartbeat{Broker: b, Seq: w.beats, At: w.now}
	for _, s := range w.specs {
		a := w.store[s.id].Assignment
		if !a.Holds(b) {
			continue
		}
		gen := a.Generation
		switch w.r.IntN(10) {
		case 0:
			gen = max(gen-1, 1)
		case 1:
			gen++
		}
		heard := time.Duration(w.r.Int64N(int64(lease / 4)))
		if !w.alive[a.Leader] || w.r.IntN(8) == 0 {
			heard = []time.Duration{-1, lease + 1, 2 * lease}[w.r.IntN(3)]
		}
		end := w.r.Int64N(100)
		hb.Reports = append(hb.Reports, failover.Report{Shard: s.id, Generation: gen, Leading: a.Leader == b,
			LogEnd: end, LastGen: uint32(gen), Durable: end - w.r.Int64N(end+1), LeaderHeard: heard})
	}
	acts := w.step(hb)
	if gs := only[failover.Grant](acts); len(gs) != 1 || gs[0].HeartbeatSeq != hb.Seq || gs[0].To != b {
		w.t.Fatalf("heartbeat %d: grants %+v, want one", hb.Seq, gs)
	}
}

// answerWrite answers a pending write: applied when its compare holds,
// and then sometimes reported as failed (the outcome was lost). A failed
// write is followed by a read of the key, as the driver does.
func (w *world) answerWrite() {
	if len(w.pending) == 0 {
		return
	}
	i := w.r.IntN(len(w.pending))
	wr := w.pending[i]
	w.pending = slices.Delete(w.pending, i, i+1)
	applied := wr.ExpectedRevision == w.store[wr.Shard].Revision && w.r.IntN(10) != 0
	if applied {
		w.rev++
		w.store[wr.Shard] = cluster.StoredAssignment{Shard: wr.Shard, Revision: w.rev, Assignment: wr.Assignment.Clone()}
	}
	if applied && w.r.IntN(10) != 0 {
		w.step(failover.WriteDone{Seq: wr.Seq, Revision: w.rev})
	} else {
		w.step(failover.WriteFailed{Seq: wr.Seq})
	}
	w.assigned(wr.Shard)
}

// answerFence answers a pending fence from a live replica: a random real
// end, sometimes unclean, from a new disk, or for another epoch.
func (w *world) answerFence() {
	if len(w.fences) == 0 {
		return
	}
	i := w.r.IntN(len(w.fences))
	f := w.fences[i]
	w.fences = slices.Delete(w.fences, i, i+1)
	if !w.alive[f.To] {
		return
	}
	end := w.r.Int64N(100)
	ev := failover.FenceReplied{Shard: f.Shard, From: f.To, Generation: f.Generation, Epoch: f.Epoch, LogEnd: end,
		LastGen: uint32(w.r.Int64N(int64(f.Generation))), Durable: end - w.r.Int64N(end+1),
		Clean: w.r.IntN(3) != 0, NewDisk: w.r.IntN(12) == 0}
	if w.r.IntN(15) == 0 {
		ev.Epoch--
	}
	w.checks.answer(w, ev)
	w.step(ev)
}

// TestRandomEventsKeepTheInvariants runs seeded random worlds, new control
// planes included, checking every action (checks_test.go).
func TestRandomEventsKeepTheInvariants(t *testing.T) {
	promoted, replaced := 0, 0
	for seed := range uint64(300) {
		w := newWorld(t, seed, true)
		w.run(400)
		promoted, replaced = promoted+w.checks.named, replaced+w.checks.replaced
	}
	t.Logf("%d promotions completed, %d of them replacing a gone replica", promoted, replaced)
	if promoted < 100 || replaced < 20 {
		t.Fatalf("only %d promotions completed, %d replacing: the worlds do not exercise promotion", promoted, replaced)
	}
}

// TestSameEventsSameActions: the events of a world stepped into a second
// machine give the same actions, to the sequence number; and a second run
// from the same seed steps the same events.
func TestSameEventsSameActions(t *testing.T) {
	for seed := range uint64(30) {
		first := newWorld(t, seed, false)
		first.run(300)
		m, err := failover.New(failover.Config{Epoch: 1, Lease: lease, Now: 0})
		if err != nil {
			t.Fatal(err)
		}
		var again []failover.Action
		for _, ev := range first.events {
			if err := m.Step(ev); err != nil {
				t.Fatal(err)
			}
			again = append(again, m.Ready()...)
		}
		if !reflect.DeepEqual(again, first.actions) {
			t.Fatalf("seed %d: the same events gave other actions", seed)
		}
		second := newWorld(t, seed, false)
		second.run(300)
		if !reflect.DeepEqual(first.events, second.events) || !reflect.DeepEqual(first.actions, second.actions) {
			t.Fatalf("seed %d: two runs of one seed differ", seed)
		}
	}
}
