package cluster_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/felixbroker/felix/cluster"
)

// checkAction checks one drained action against the store as it is now.
// fresh: the action was decided in the step that emitted it, so the
// brokers live now are the brokers live at placement.
func checkAction(d *driver, epoch int64, a cluster.Action, fresh bool) error {
	switch a := a.(type) {
	case cluster.Write:
		return errors.Join(checkEpoch(a.Epoch, epoch), checkWrite(d, a, fresh))
	case cluster.Delete:
		return checkEpoch(a.Epoch, epoch)
	case cluster.Unplaced:
		if spec := d.store.objects[a.Object]; a.Needed != spec.ReplicationFactor || a.Live != len(d.store.brokers) {
			return fmt.Errorf("reported %d needed, %d live; the store has %d and %d",
				a.Needed, a.Live, spec.ReplicationFactor, len(d.store.brokers))
		}
	}
	return nil
}

func checkEpoch(got, want int64) error {
	if got != want {
		return fmt.Errorf("epoch %d, the control plane's is %d", got, want)
	}
	return nil
}

// checkWrite: a replica set of distinct brokers, as many as the object's
// replication factor, led by its first; a generation above the stored one;
// and, when fresh, every replica live and as many racks as can be.
func checkWrite(d *driver, w cluster.Write, fresh bool) error {
	a := w.Assignment
	spec, ok := d.store.objects[w.Shard.Object]
	switch {
	case !ok || spec.Incarnation != a.Incarnation:
		return fmt.Errorf("written for incarnation %d, the store has %v", a.Incarnation, spec)
	case len(a.Replicas) != spec.ReplicationFactor:
		return fmt.Errorf("%d replicas at replication factor %d", len(a.Replicas), spec.ReplicationFactor)
	case a.Leader != a.Replicas[0] || !a.Holds(a.Leader):
		return fmt.Errorf("leader %v is not the first replica", a.Leader)
	case a.Generation < 1:
		return errors.New("generation 0")
	}
	if old, ok := d.store.assignments[w.Shard]; ok && a.Generation <= old.Assignment.Generation {
		return fmt.Errorf("generation %d over a stored %d", a.Generation, old.Assignment.Generation)
	}
	if err := checkDistinct(a.Replicas); err != nil || !fresh {
		return err
	}
	return checkLiveAndRacks(d, a.Replicas)
}

func checkDistinct(rs []cluster.Replica) error {
	seen := map[string]bool{}
	for _, r := range rs {
		if seen[r.Broker] {
			return fmt.Errorf("broker %s holds two replicas", r.Broker)
		}
		seen[r.Broker] = true
	}
	return nil
}

func checkLiveAndRacks(d *driver, rs []cluster.Replica) error {
	var racks []string
	for _, r := range rs {
		b, ok := d.store.brokers[r.Broker]
		if !ok || b.DiskID != r.DiskID {
			return fmt.Errorf("replica %v is not live", r)
		}
		if !slices.Contains(racks, b.Rack) {
			racks = append(racks, b.Rack)
		}
	}
	if want := min(len(rs), len(liveRacks(d))); len(racks) != want {
		return fmt.Errorf("replicas on %d racks, %d could be used", len(racks), want)
	}
	return nil
}

func liveRacks(d *driver) []string {
	var racks []string
	for _, b := range d.store.brokers {
		if !slices.Contains(racks, b.Rack) {
			racks = append(racks, b.Rack)
		}
	}
	return racks
}

// checkSettled checks a machine with nothing in flight: the store holds
// exactly its decisions, every object is placed or reported, and its
// counts are the decisions' counts. foreign: someone else may have written
// a key since, so the machine may know an older revision of it (its next
// write there fails its compare and resyncs).
func checkSettled(t testing.TB, d *driver, foreign bool) {
	t.Helper()
	st := d.m.Status()
	err := errors.Join(checkStoredDecisions(d, st, foreign), checkObjectsPlaced(d, st), checkCounts(st))
	if err != nil {
		t.Fatalf("settled:\n%v\n%s", err, printStatus(st))
	}
}

func checkStoredDecisions(d *driver, st cluster.Status, foreign bool) error {
	if len(st.Shards) != len(d.store.assignments) {
		return fmt.Errorf("%d shards decided, %d stored", len(st.Shards), len(d.store.assignments))
	}
	for _, ss := range st.Shards {
		stored := d.store.assignments[ss.Shard]
		revisionOK := stored.Revision == ss.Revision || foreign && stored.Revision > ss.Revision
		if !ss.Stored || !revisionOK || !stored.Assignment.Equal(ss.Assignment) {
			return fmt.Errorf("%v decided %v, stored %v at %d", ss.Shard, ss.Assignment, stored.Assignment, stored.Revision)
		}
	}
	return nil
}

// checkObjectsPlaced: each object has all its shards, or is reported
// unplaced while its replication factor exceeds the live brokers.
func checkObjectsPlaced(d *driver, st cluster.Status) error {
	for id, spec := range d.store.objects {
		placed := 0
		for i := range spec.Shards {
			if _, ok := d.store.assignments[cluster.ShardID{Object: id, Shard: i}]; ok {
				placed++
			}
		}
		reported := slices.ContainsFunc(st.Unplaced, func(u cluster.Unplaced) bool { return u.Object == id })
		if placed < spec.Shards && (!reported || spec.ReplicationFactor <= len(d.store.brokers)) {
			return fmt.Errorf("%v: %d of %d shards placed, reported %t", id, placed, spec.Shards, reported)
		}
	}
	return nil
}

// checkCounts recounts leaders and replicas from the decided shards.
func checkCounts(st cluster.Status) error {
	leaders, replicas := map[cluster.Replica]int{}, map[cluster.Replica]int{}
	for _, ss := range st.Shards {
		leaders[ss.Assignment.Leader]++
		for _, r := range ss.Assignment.Replicas {
			replicas[r]++
		}
	}
	for _, bs := range st.Brokers {
		r := bs.Broker.Replica()
		if bs.Leaders != leaders[r] || bs.Replicas != replicas[r] {
			return fmt.Errorf("%v counts %d leaders and %d replicas, the shards say %d and %d",
				r, bs.Leaders, bs.Replicas, leaders[r], replicas[r])
		}
	}
	return nil
}
