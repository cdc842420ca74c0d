package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/felixbroker/felix/client"
)

// A broker says the offsets, bytes and record times of the shards it leads
// only; DescribeStreamShards asks each leader, so a stream whose shards
// three brokers lead is described whole through one seed.
func TestDescribeStreamShardsHasEveryShardsFiguresFromItsLeader(t *testing.T) {
	const shards = 6
	c := startCluster(t, 3, nil)
	s := clusterStream(t, c, c.brokers[0], client.StreamConfig{Shards: shards})
	cc := dialCluster(t, []string{c.brokers[0].addr()})
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for i := range shards {
		ts := client.WithTimestamp(at.Add(time.Duration(i) * time.Minute))
		if _, err := cc.Publish(testCtx(t), s, fmt.Appendf(nil, "v%d", i), client.WithKey(keyFor("k", i, shards)), ts); err != nil {
			t.Fatal(err)
		}
	}
	one, err := cc.DescribeStream(testCtx(t), s)
	if err != nil {
		t.Fatal(err)
	}
	blind := 0
	for _, sh := range one.Shards {
		if sh.NextOffset == 0 {
			blind++
		}
	}
	if blind == 0 {
		t.Fatal("the seed knew every shard's offsets: the placement is not spread, the test proves nothing")
	}
	info, err := cc.DescribeStreamShards(testCtx(t), s)
	if err != nil {
		t.Fatal(err)
	}
	for i, sh := range info.Shards {
		want := at.Add(time.Duration(i) * time.Minute)
		if sh.NextOffset != 1 || sh.Bytes <= 0 || !sh.FirstTime.Equal(want) || !sh.LastTime.Equal(want) {
			t.Errorf("shard %d: next %d, %d bytes, times %v..%v; want one record at %v", i, sh.NextOffset, sh.Bytes, sh.FirstTime, sh.LastTime, want)
		}
	}
}
