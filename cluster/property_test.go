package cluster_test

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/felixbroker/felix/cluster"
)

// TestRandomScenariosKeepTheInvariants runs seeded random joins, leaves,
// creates, deletes, answers, lost writes, foreign writes and new control
// planes, checking every action and the settled state.
func TestRandomScenariosKeepTheInvariants(t *testing.T) {
	for seed := range uint64(200) {
		newScenario(t, newRandChooser(seed), seed%2 == 0).run(200)
	}
}

// TestWithoutInterferenceNoWriteFails: when nobody else writes, every
// compare the machine asks for holds, and it never needs a resync.
func TestWithoutInterferenceNoWriteFails(t *testing.T) {
	for seed := range uint64(60) {
		s := newScenario(t, newRandChooser(seed), false)
		s.run(200)
		for _, a := range s.d.drained {
			if _, ok := a.(cluster.Resync); ok && !s.d.m.Synced() {
				t.Fatalf("seed %d: a resync was asked with no interference", seed)
			}
		}
		if n := s.d.failed; n != 0 {
			t.Fatalf("seed %d: %d writes failed their compare", seed, n)
		}
	}
}

// TestSameInputSameActions runs each scenario twice: the actions are the
// same, to the sequence number.
func TestSameInputSameActions(t *testing.T) {
	for seed := range uint64(30) {
		first := newScenario(t, newRandChooser(seed), true)
		first.run(150)
		second := newScenario(t, newRandChooser(seed), true)
		second.run(150)
		if !reflect.DeepEqual(first.d.drained, second.d.drained) {
			t.Fatalf("seed %d: two runs of the same input differ", seed)
		}
	}
}

// TestSnapshotOrderDoesNotMatter: the same stored state listed in another
// order gives the same actions.
func TestSnapshotOrderDoesNotMatter(t *testing.T) {
	for seed := range uint64(50) {
		s := newScenario(t, newRandChooser(seed), false)
		s.run(100)
		snap := s.d.store.snapshot()
		snap.Objects = append(snap.Objects, cluster.ObjectSpec{ID: cluster.ObjectID{Kind: cluster.KindStream,
			Tenant: "t", Namespace: "ns", Name: "new"}, Shards: 5, ReplicationFactor: 2, Incarnation: 1000})
		want := actionsAfter(t, snap)
		slices.Reverse(snap.Brokers)
		slices.Reverse(snap.Objects)
		slices.Reverse(snap.Assignments)
		if got := actionsAfter(t, snap); !reflect.DeepEqual(got, want) {
			t.Fatalf("seed %d: reversed snapshot gives\n%v\nnot\n%v", seed, got, want)
		}
	}
}

func actionsAfter(t *testing.T, snap cluster.Snapshot) []cluster.Action {
	m, err := cluster.New(cluster.Config{Epoch: 1})
	if err != nil {
		t.Fatal(err)
	}
	m.Ready()
	if err := m.Step(snap); err != nil {
		t.Fatal(err)
	}
	return m.Ready()
}

// TestLeadersSpreadEvenly: brokers joined, then objects created at once,
// at any replication factor the brokers allow: the leader counts differ by
// at most one, whatever the racks.
func TestLeadersSpreadEvenly(t *testing.T) {
	for seed := range uint64(300) {
		c := newRandChooser(seed)
		d := newDriver(t, 1)
		d.ready()
		if err := d.resync(); err != nil {
			t.Fatal(err)
		}
		n := 1 + c.intn(len(scenarioBrokers))
		for _, id := range scenarioBrokers[:n] {
			rack := []string{"", "r1", "r2"}[c.intn(3)]
			if err := d.join(cluster.Broker{ID: id, DiskID: "d1", Rack: rack}); err != nil {
				t.Fatal(err)
			}
		}
		rf1 := seed%2 == 0
		for i := range 1 + c.intn(6) {
			spec := spreadSpec(c, i, n, rf1)
			if err := d.create(spec); err != nil {
				t.Fatal(err)
			}
		}
		if err := checkSpread(d.m.Status(), rf1); err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, printLoad(d.m.Status()))
		}
	}
}

func spreadSpec(c chooser, i, brokers int, rf1 bool) cluster.ObjectSpec {
	kind := []cluster.Kind{cluster.KindStream, cluster.KindCache}[c.intn(2)]
	rf := 1
	if !rf1 {
		rf = 1 + c.intn(brokers)
	}
	return cluster.ObjectSpec{ID: cluster.ObjectID{Kind: kind, Tenant: "t", Namespace: "ns", Name: fmt.Sprint("o", i)},
		Shards: 1 + c.intn(20), ReplicationFactor: rf}
}

// checkSpread: leader counts within one of each other; at replication
// factor 1 the replica counts are the leader counts.
func checkSpread(st cluster.Status, rf1 bool) error {
	lo, hi := st.Brokers[0].Leaders, st.Brokers[0].Leaders
	for _, b := range st.Brokers {
		lo, hi = min(lo, b.Leaders), max(hi, b.Leaders)
		if rf1 && b.Replicas != b.Leaders {
			return fmt.Errorf("%s: %d replicas, %d leaders at replication factor 1", b.Broker.ID, b.Replicas, b.Leaders)
		}
	}
	if hi-lo > 1 {
		return fmt.Errorf("leader counts from %d to %d", lo, hi)
	}
	return nil
}

// FuzzMachine reads a scenario from the fuzz input and checks the same
// invariants as the random scenarios.
func FuzzMachine(f *testing.F) {
	f.Add([]byte{0, 1, 2, 4, 4, 4, 7, 7, 9, 10, 3, 5, 7, 8})
	f.Add([]byte("a scenario of joins, creates and answers in every order"))
	f.Fuzz(func(t *testing.T, data []byte) {
		newScenario(t, &byteChooser{data: data}, true).run(len(data))
	})
}
