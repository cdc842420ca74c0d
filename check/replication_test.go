package check

import "testing"

// Each replication anomaly is found, with its kind and no other, on
// broker events made by hand; and events that keep the rules pass.
func TestReplicationAnomaliesOnHandMadeEvents(t *testing.T) {
	ack := func(broker string, gen, off uint64, at int64) Ack {
		return Ack{Shard: shardA, Broker: broker, Generation: gen, Offset: off, Time: at, LeaseSent: 1000, Lease: 1000}
	}
	readAB := func(s *script) {
		s.publish(1, "a", 0)
		s.publish(1, "b", 1)
		s.read(3, "r1", false, 0, "a", 1, "b")
	}
	cases := []struct {
		name  string
		build func(s *script)
		want  []Kind
	}{
		{"clean", func(s *script) {
			readAB(s)
			s.acks = []Ack{ack("b1", 1, 0, 1100), ack("b1", 1, 1, 1750), ack("b2", 2, 2, 1200)}
			s.logs = []ShardLogs{{Shard: shardA, Watermark: 2, Final: entries(1, "a", "b", "x"), Replicas: []ReplicaLog{
				{Broker: "b1", Entries: entries(1, "a", "b", "x")},
				{Broker: "b2", Entries: entries(1, "a", "b", "y")}, // above the watermark: may differ
				{Broker: "b3", Entries: entries(1, "a")},           // behind: holds less
			}}}
		}, nil},
		{"double ack: two brokers at one generation", func(s *script) {
			s.acks = []Ack{ack("b1", 3, 0, 1100), ack("b2", 3, 1, 1100), ack("b2", 3, 2, 1100)}
		}, []Kind{DoubleAck}},
		{"late ack: past 3L/4 of the lease", func(s *script) {
			s.acks = []Ack{ack("b1", 1, 0, 1751)}
		}, []Kind{LateAck}},
		{"late ack: before the lease's heartbeat was sent", func(s *script) {
			s.acks = []Ack{ack("b1", 1, 0, 999)}
		}, []Kind{LateAck}},
		{"late ack: no lease", func(s *script) {
			s.acks = []Ack{{Shard: shardA, Broker: "b1", Generation: 1, Time: 5}}
		}, []Kind{LateAck}},
		{"replica divergence below the watermark", func(s *script) {
			s.logs = []ShardLogs{{Shard: shardA, Watermark: 2, Replicas: []ReplicaLog{
				{Broker: "b1", Entries: entries(1, "a", "b")},
				{Broker: "b2", Entries: []LogEntry{{0, 1, HashValue("a")}, {1, 2, HashValue("b")}}},
			}}}
		}, []Kind{ReplicaDivergence}},
		{"rolled back read: the final log holds another value", func(s *script) {
			readAB(s)
			s.logs = []ShardLogs{{Shard: shardA, Final: entries(1, "a", "x", "c")}}
		}, []Kind{RolledBackRead}},
		{"rolled back read: the final log lost the offset", func(s *script) {
			readAB(s)
			s.logs = []ShardLogs{{Shard: shardA, Final: []LogEntry{{0, 1, HashValue("a")}, {2, 1, HashValue("c")}}}}
		}, []Kind{RolledBackRead}},
		{"no roll back where the caller declares the offset absent (compacted)", func(s *script) {
			readAB(s)
			s.logs = []ShardLogs{{Shard: shardA, Final: []LogEntry{{0, 1, HashValue("a")}, {2, 1, HashValue("c")}}}}
			s.absent = func(sh Shard, off uint64) bool { return off == 1 }
		}, nil},
		{"no roll back outside the final log (retention)", func(s *script) {
			readAB(s)
			s.logs = []ShardLogs{{Shard: shardA, Final: []LogEntry{{1, 1, HashValue("b")}}}}
		}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var s script
			c.build(&s)
			r := Check(s.history(), Options{Absent: s.absent})
			requireKinds(t, &r, c.want...)
		})
	}
}
