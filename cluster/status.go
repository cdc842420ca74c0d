package cluster

import (
	"maps"
	"slices"
)

// Status is a copy of what the machine knows, for `felix cluster status`,
// a creator waiting on its object, and the next step's promotion. The
// caller owns it.
type Status struct {
	Epoch    int64
	Synced   bool // false while a Resync is outstanding: the rest may be stale
	Brokers  []BrokerStatus
	Shards   []ShardStatus
	Unplaced []Unplaced
}

// BrokerStatus is a live broker and what is decided for it.
type BrokerStatus struct {
	Broker   Broker
	Leaders  int // shards it leads, streams and caches together
	Replicas int // shards it holds a replica of, leader or not
}

// ShardStatus is one shard's decided assignment.
type ShardStatus struct {
	Shard      ShardID
	Assignment Assignment
	Revision   int64 // of the stored assignment; 0: none stored yet
	Stored     bool  // the store holds exactly Assignment
	LeaderLive bool  // the leader's broker is registered, on the leader's disk
	Live       int   // replicas whose broker is registered on their disk
}

// Status copies the machine's view: live brokers by id, decided shards and
// unplaced objects in order.
func (m *Machine) Status() Status {
	st := Status{Epoch: m.epoch, Synced: m.synced}
	for _, b := range m.liveBrokers() {
		r := b.Replica()
		st.Brokers = append(st.Brokers, BrokerStatus{Broker: b, Leaders: m.load.leaders[r], Replicas: m.load.replicas[r]})
	}
	for _, id := range slices.SortedFunc(maps.Keys(m.shards), compareShards) {
		if s := m.shards[id]; s.wanted {
			st.Shards = append(st.Shards, m.shardStatus(id, s))
		}
	}
	for _, id := range slices.SortedFunc(maps.Keys(m.unplaced), compareObjects) {
		st.Unplaced = append(st.Unplaced, m.unplaced[id])
	}
	return st
}

func (m *Machine) shardStatus(id ShardID, s *shard) ShardStatus {
	ss := ShardStatus{Shard: id, Assignment: s.want.Clone(), Revision: s.revision,
		Stored: s.revision > 0 && s.stored.Equal(s.want), LeaderLive: m.live(s.want.Leader)}
	for _, r := range s.want.Replicas {
		if m.live(r) {
			ss.Live++
		}
	}
	return ss
}
