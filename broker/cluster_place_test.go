package broker

import (
	"fmt"
	"slices"
	"testing"

	"github.com/felixbroker/felix/engine"
)

var placedStream = engine.StreamID{Tenant: "t", Namespace: "n", Name: "placed"}

// A stream of 6 shards created through one broker of three is placed
// across all of them, two shards each; each broker opens only its own
// shards (its data directory holds only theirs), and every broker's
// engine lists the stream.
func TestASixShardStreamIsPlacedTwoPerBroker(t *testing.T) {
	s := sharedStore(t)
	brokers := []*Broker{start(t, clustered("a", s, Config{})), start(t, clustered("b", s, Config{})), start(t, clustered("c", s, Config{}))}
	waitView(t, brokers[0].View(), "all three registered", registered(brokers[0].View(), "a", "b", "c"))
	cfg := engine.StreamConfig{Shards: 6, Durable: true}
	if _, err := brokers[0].Engine().CreateStream(placedStream, cfg); err != nil {
		t.Fatal(err)
	}
	held := map[int]string{}
	for _, b := range brokers {
		waitView(t, b.View(), b.cfg.Cluster.BrokerID+" lists the stream and sees it placed", func() bool {
			return len(b.Engine().Streams("t", "n")) == 1 && placedSeen(b, placedStream, cfg.Shards)
		})
		mine := heldShards(b, placedStream, cfg.Shards)
		if len(mine) != 2 {
			t.Fatalf("%s holds shards %v, want two of six", b.cfg.Cluster.BrokerID, mine)
		}
		for _, i := range mine {
			if other, ok := held[i]; ok {
				t.Fatalf("shard %d held by %s and %s", i, other, b.cfg.Cluster.BrokerID)
			}
			held[i] = b.cfg.Cluster.BrokerID
		}
		waitRound(t, b, "its shards open", func() bool { return slices.Equal(openShards(b, placedStream, cfg.Shards), mine) })
		if dirs, want := shardDirs(t, b, placedStream), shardNames(mine); !slices.Equal(dirs, want) {
			t.Fatalf("%s's data directory holds %v, want %v", b.cfg.Cluster.BrokerID, dirs, want)
		}
	}
}

// placedSeen reports whether the broker's View knows a live leader for
// every shard of id.
func placedSeen(b *Broker, id engine.StreamID, shards int) bool {
	for i := range shards {
		if local, addr := b.View().Leader(id, i); !local && addr == "" {
			return false
		}
	}
	return true
}

// heldShards are the shards of id the broker's View says it holds.
func heldShards(b *Broker, id engine.StreamID, shards int) []int {
	var out []int
	for i := range shards {
		if b.View().Holds(id, i) {
			out = append(out, i)
		}
	}
	return out
}

// openShards are the shards of id the broker's engine has open.
func openShards(b *Broker, id engine.StreamID, shards int) []int {
	s, err := b.Engine().Stream(id)
	if err != nil {
		return nil
	}
	var out []int
	for i := range shards {
		if s.Held(i) {
			out = append(out, i)
		}
	}
	return out
}

// shardDirs lists the shard directories of id in the broker's data
// directory.
func shardDirs(t *testing.T, b *Broker, id engine.StreamID) []string {
	t.Helper()
	names, err := b.fs.List(fmt.Sprintf("%s/streams/%s/%s/%s", b.cfg.DataDir, id.Tenant, id.Namespace, id.Name))
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func shardNames(shards []int) []string {
	var out []string
	for _, i := range shards {
		out = append(out, fmt.Sprintf("shard-%04d", i))
	}
	return out
}
