package group

import (
	"testing"

	"github.com/felixbroker/felix/engine"
)

// DescribeOpen describes the groups of open shards, lag included, without
// opening any shard's groups itself.
func TestDescribeOpenListsTheGroupsOfOpenShards(t *testing.T) {
	f := newFixture(t, Options{})
	if got := f.m.DescribeOpen(); len(got) != 0 {
		t.Fatalf("before any group: %d descriptions", len(got))
	}
	f.publish(5)
	if err := f.m.Create(key("billing"), engine.StartEarliest, 0); err != nil {
		t.Fatal(err)
	}
	d := f.poll("billing", "c1", 2)
	f.ack("billing", "c1", d[0].Offset, d[1].Offset)
	got := f.m.DescribeOpen()
	if len(got) != 1 || got[0].Key != key("billing") || got[0].Lag != 3 {
		t.Fatalf("DescribeOpen = %+v, want billing with lag 3", got)
	}
}
