package cluster_test

import (
	"cmp"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/felixbroker/felix/cluster"
)

// chooser draws the choices of a scenario: from a seeded PRNG, or from the
// bytes of a fuzz input.
type chooser interface{ intn(n int) int }

type randChooser struct{ r *rand.Rand }

func newRandChooser(seed uint64) randChooser {
	return randChooser{rand.New(rand.NewPCG(seed, seed^0x9e37))}
}

func (c randChooser) intn(n int) int { return c.r.IntN(n) }

// byteChooser reads one byte per choice, and 0 once the input is used up.
type byteChooser struct {
	data []byte
	at   int
}

func (c *byteChooser) intn(n int) int {
	if c.at >= len(c.data) {
		return 0
	}
	c.at++
	return int(c.data[c.at-1]) % n
}

// scenario drives a driver with random changes to the store and random
// answers, checking each batch of actions as it is drained.
type scenario struct {
	t      testing.TB
	c      chooser
	d      *driver
	epoch  int64
	meddle bool // the scenario may overwrite keys and fail writes
}

var (
	scenarioBrokers = []string{"a", "b", "c", "d", "e", "f"}
	scenarioObjects = []string{"o1", "o2", "o3", "o4", "o5"}
)

func newScenario(t testing.TB, c chooser, meddle bool) *scenario {
	s := &scenario{t: t, c: c, epoch: 1, meddle: meddle}
	s.d = newDriver(t, s.epoch)
	s.drain(false)
	s.must(s.d.resync())
	s.drain(false)
	return s
}

func (s *scenario) must(err error) {
	s.t.Helper()
	if err != nil {
		s.t.Fatal(err)
	}
}

// run takes n random steps, then lets the machine settle.
func (s *scenario) run(n int) {
	for range n {
		s.step()
	}
	s.must(s.d.settle())
	checkSettled(s.t, s.d, s.meddle)
}

func (s *scenario) step() {
	switch op := s.c.intn(12); {
	case op < 3:
		s.must(s.d.join(s.broker()))
	case op < 4:
		s.must(s.d.leave(s.pick(scenarioBrokers), ""))
	case op < 6:
		s.create(s.spec())
	case op < 7:
		s.must(s.d.remove(s.object()))
	case op < 9:
		s.answer()
		s.drain(true)
		return
	case op < 10 && s.meddle:
		s.interfere()
	case op < 11:
		s.restart()
	}
	s.drain(false)
}

// create creates the object, or delivers the stored one again.
func (s *scenario) create(spec cluster.ObjectSpec) {
	if stored, ok := s.d.store.objects[spec.ID]; ok {
		s.must(s.d.step(cluster.ObjectCreated{Spec: stored}))
		return
	}
	s.must(s.d.create(spec))
}

func (s *scenario) pick(from []string) string { return from[s.c.intn(len(from))] }

func (s *scenario) broker() cluster.Broker {
	id := s.pick(scenarioBrokers)
	return cluster.Broker{ID: id, DiskID: s.pick([]string{"d1", "d1", "d1", "d2"}),
		Rack: s.pick([]string{"", "r1", "r2", "r3"}), ClientAddr: id + ":7180", PeerAddr: id + ":7190"}
}

func (s *scenario) object() cluster.ObjectID {
	kind := []cluster.Kind{cluster.KindStream, cluster.KindCache}[s.c.intn(2)]
	return cluster.ObjectID{Kind: kind, Tenant: "t", Namespace: "ns", Name: s.pick(scenarioObjects)}
}

func (s *scenario) spec() cluster.ObjectSpec {
	return cluster.ObjectSpec{ID: s.object(), Shards: 1 + s.c.intn(8), ReplicationFactor: 1 + s.c.intn(4)}
}

// answer answers the oldest write in flight, or all of them; when the
// machine asked for a Resync, it answers them all and resyncs.
func (s *scenario) answer() {
	if !s.d.m.Synced() {
		s.must(s.d.answerOrResync())
		return
	}
	seqs := slices.Sorted(maps.Keys(s.d.inflight))
	if len(seqs) > 0 && s.c.intn(2) == 0 {
		s.must(s.d.answer(seqs[0]))
		return
	}
	s.must(s.d.answerAll())
}

// interfere is another writer: it overwrites a stored key, or a write's
// outcome is lost.
func (s *scenario) interfere() {
	stored := slices.SortedFunc(maps.Keys(s.d.store.assignments), compareShardIDs)
	seqs := slices.Sorted(maps.Keys(s.d.inflight))
	if s.c.intn(2) == 0 && len(stored) > 0 {
		s.d.store.overwrite(stored[s.c.intn(len(stored))])
		return
	}
	if len(seqs) > 0 {
		seq := seqs[s.c.intn(len(seqs))]
		delete(s.d.inflight, seq)
		s.must(s.d.step(cluster.WriteFailed{Seq: seq}))
	}
}

// restart elects a new control plane; the old one's writes in flight are
// refused by the epoch guard, so they never land.
func (s *scenario) restart() {
	s.epoch++
	s.d.restart(s.epoch)
}

// drain takes the machine's actions and checks them against the store as
// it is now. answered: the batch follows answers, so its writes may carry
// decisions made in an earlier step (when other brokers were live).
func (s *scenario) drain(answered bool) {
	for _, a := range s.d.ready() {
		if err := checkAction(s.d, s.epoch, a, !answered); err != nil {
			s.t.Fatalf("%v: %v", formatAction(a), err)
		}
	}
}

func compareShardIDs(a, b cluster.ShardID) int {
	return cmp.Or(compareObjectIDs(a.Object, b.Object), cmp.Compare(a.Shard, b.Shard))
}

func compareObjectIDs(a, b cluster.ObjectID) int {
	return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Tenant, b.Tenant),
		cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}
