package cluster

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// join registers a broker, or its new incarnation, and places what was
// waiting for brokers. Existing shards stay where they are: a new broker
// takes new shards (it has the fewest), nothing moves to it.
func (m *Machine) join(b Broker) error {
	if _, known := m.brokers[b.ID]; !known && len(m.brokers) >= BrokersMax {
		return fmt.Errorf("%w: broker %q would be one more than %d", ErrInvalidEvent, b.ID, BrokersMax)
	}
	m.brokers[b.ID] = b
	for _, id := range slices.SortedFunc(maps.Keys(m.unplaced), compareObjects) {
		m.place(id)
	}
	return nil
}

// leave forgets a broker whose lease ended. Its shards keep their
// assignment: promotion is the next step's, not placement's.
func (m *Machine) leave(ev BrokerLeft) {
	b, ok := m.brokers[ev.ID]
	if ok && (ev.DiskID == "" || ev.DiskID == b.DiskID) {
		delete(m.brokers, ev.ID)
	}
}

// live reports whether r is a registered broker on the disk r names.
func (m *Machine) live(r Replica) bool {
	b, ok := m.brokers[r.Broker]
	return ok && b.DiskID == r.DiskID
}

// liveBrokers is every registered broker, by id.
func (m *Machine) liveBrokers() []Broker {
	return slices.SortedFunc(maps.Values(m.brokers), func(a, b Broker) int { return strings.Compare(a.ID, b.ID) })
}
