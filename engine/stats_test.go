package engine

import (
	"testing"

	"github.com/felixbroker/felix/segment/vfs"
)

// Stats lists every open shard with its position, its live subscribers
// and, for a durable one, its log's counters and recovery.
func TestStatsDescribeEveryShard(t *testing.T) {
	e := openEngine(t, vfs.NewMem())
	defer e.Close()
	s, err := e.CreateStream(sid, StreamConfig{Shards: 2, Durable: true})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := e.Stream(s.ID)
	publish(t, st, rec("", 1), rec("", 2))
	sh, _ := st.Shard(0)
	sub, err := sh.Subscribe(SubscribeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	stats := e.Stats()
	if len(stats) != 2 {
		t.Fatalf("%d shard stats, want 2", len(stats))
	}
	for _, ss := range stats {
		if ss.Stream != sid || !ss.Durable {
			t.Fatalf("shard stats %+v: wrong stream or not durable", ss)
		}
		wantEnd, wantSubs := int64(0), 0
		if ss.Shard == 0 {
			wantEnd, wantSubs = 2, 1
		}
		if ss.End != wantEnd || ss.Subscribers != wantSubs || ss.Log.Records != wantEnd || ss.Log.Segments < 1 {
			t.Fatalf("shard %d: end %d, %d subscribers, %d records logged, %d segments; want end %d, %d subscribers",
				ss.Shard, ss.End, ss.Subscribers, ss.Log.Records, ss.Log.Segments, wantEnd, wantSubs)
		}
	}
}
