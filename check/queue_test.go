package check

import "testing"

// abc publishes a, b, c at offsets 0, 1, 2.
func abc(s *script) {
	s.publish(1, "a", 0)
	s.publish(1, "b", 1)
	s.publish(2, "c", 2)
}

// Each queue anomaly is found, with its kind and no other, on a small
// history made by hand; and the histories that keep the rules pass.
func TestQueueAnomaliesOnHandMadeHistories(t *testing.T) {
	cases := []struct {
		name  string
		build func(s *script)
		o     Options
		want  []Kind
	}{
		{"clean", func(s *script) {
			abc(s)
			s.read(3, "r1", false, 0, "a", 1, "b", 2, "c")
			s.read(4, "final", true, 0, "a", 1, "b", 2, "c")
		}, Options{}, nil},
		{"a failed publish unread, an unknown one read or not", func(s *script) {
			abc(s)
			s.fail(1, Publish{Shard: shardA, Value: "x"})
			s.unknown(1, Publish{Shard: shardA, Value: "y"})
			s.unknown(1, Publish{Shard: shardA, Value: "z"})
			s.read(4, "final", true, 0, "a", 1, "b", 2, "c", 3, "y")
		}, Options{}, nil},
		{"lost: acknowledged, a higher offset read, never read", func(s *script) {
			abc(s)
			s.read(3, "r1", false, 0, "a", 2, "c")
		}, Options{}, []Kind{LostWrite, PollSkip}},
		{"unseen: acknowledged, not in the final reads", func(s *script) {
			abc(s)
			s.read(3, "r1", false, 0, "a", 1, "b", 2, "c")
			s.read(4, "final", true, 0, "a", 1, "b")
		}, Options{}, []Kind{Unseen}},
		{"inconsistent offsets: two values at one offset", func(s *script) {
			s.publish(1, "a", 0)
			s.unknown(2, Publish{Shard: shardA, Value: "b"})
			s.read(3, "r1", false, 0, "b")
		}, Options{}, []Kind{InconsistentOffsets}},
		{"duplicate: one value at two offsets", func(s *script) {
			s.publish(1, "a", 0)
			s.read(3, "r1", false, 0, "a", 1, "a")
		}, Options{}, []Kind{Duplicate}},
		{"a value published twice may be at two offsets", func(s *script) {
			s.publish(1, "a", 0)
			s.publish(1, "a", 1)
			s.read(3, "r1", false, 0, "a", 1, "a")
		}, Options{ReusedValues: true}, nil},
		{"aborted read: a definitely failed publish read", func(s *script) {
			s.fail(1, Publish{Shard: shardA, Value: "a"})
			s.read(3, "r1", false, 0, "a")
		}, Options{}, []Kind{AbortedRead}},
		{"unexpected: a value never published", func(s *script) {
			s.read(3, "r1", false, 0, "ghost")
		}, Options{}, []Kind{Unexpected}},
		{"poll skip: an offset another reader saw", func(s *script) {
			abc(s)
			s.read(3, "r1", false, 0, "a", 1, "b", 2, "c")
			s.read(4, "r2", false, 0, "a", 2, "c")
		}, Options{}, []Kind{PollSkip}},
		{"poll skip: the first delivery past what was owed", func(s *script) {
			abc(s)
			s.read(3, "r1", false, 0, "a", 1, "b", 2, "c")
			s.read(4, "r2", false, 1, "b", 2, "c")
		}, Options{}, []Kind{PollSkip}},
		{"no skip over an offset nobody saw a record at (a control record)", func(s *script) {
			s.publish(1, "a", 0)
			s.publish(1, "c", 2)
			s.read(3, "r1", false, 0, "a", 2, "c")
			s.read(4, "final", true, 0, "a", 2, "c")
		}, Options{}, nil},
		{"no skip over an offset declared absent (compacted)", func(s *script) {
			abc(s)
			s.read(3, "r1", false, 0, "a", 1, "b", 2, "c")
			s.read(4, "r2", false, 0, "a", 2, "c")
		}, Options{Absent: func(sh Shard, off uint64) bool { return sh == shardA && off == 1 }}, nil},
		{"nonmonotonic: an offset delivered again", func(s *script) {
			abc(s)
			s.read(3, "r1", false, 0, "a", 1, "b")
			s.read(3, "r1", false, 1, "b", 2, "c")
		}, Options{}, []Kind{NonmonotonicPoll}},
		{"nonmonotonic: offsets out of order", func(s *script) {
			abc(s)
			s.read(3, "r1", false, 0, "a", 2, "c", 1, "b")
		}, Options{}, []Kind{NonmonotonicPoll, PollSkip}},
		{"two subscriptions of one reader may each start over", func(s *script) {
			abc(s)
			s.read(3, "r1", false, 0, "a", 1, "b")
			s.read(3, "r1-resumed", false, 0, "a", 1, "b", 2, "c")
		}, Options{}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var s script
			c.build(&s)
			r := Check(s.history(), c.o)
			requireKinds(t, &r, c.want...)
		})
	}
}
