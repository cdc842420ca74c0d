package control

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/felixbroker/felix/cluster"
)

func TestTheKeyLayoutIsFrozen(t *testing.T) {
	var b strings.Builder
	for _, k := range []string{
		BrokerKey("b1"),
		CatalogKey(orders),
		CatalogKey(sessions),
		AssignmentKey(cluster.ShardID{Object: orders, Shard: 0}),
		AssignmentKey(cluster.ShardID{Object: sessions, Shard: 1023}),
		UnplacedKey(orders),
		Election,
	} {
		fmt.Fprintln(&b, k)
	}
	golden(t, "keys.txt", []byte(b.String()))
}

func TestKeysParseBack(t *testing.T) {
	shard := cluster.ShardID{Object: sessions, Shard: 7}
	for _, tc := range []struct {
		key  string
		want parsedKey
	}{
		{BrokerKey("b1"), parsedKey{kind: keyBroker, broker: "b1"}},
		{CatalogKey(orders), parsedKey{kind: keyCatalog, shard: cluster.ShardID{Object: orders}}},
		{AssignmentKey(shard), parsedKey{kind: keyAssignment, shard: shard}},
		{UnplacedKey(sessions), parsedKey{kind: keyUnplaced, shard: cluster.ShardID{Object: sessions}}},
		{Election + "/694d8a3b", parsedKey{kind: keyCandidate}},
		{Root + "later/thing", parsedKey{kind: keyOther}},
	} {
		got, err := parseKey(tc.key)
		if err != nil || got != tc.want {
			t.Errorf("parseKey(%q) = %+v, %v; want %+v", tc.key, got, err, tc.want)
		}
	}
}

func TestMalformedKeysAreRefused(t *testing.T) {
	for _, key := range []string{
		BrokerKey(""),
		BrokerKey("a/b"),
		catalogDir + "stream/acme/shop",
		catalogDir + "queue/acme/shop/orders",
		catalogDir + "stream/acme//orders",
		PlacementPrefix(orders) + "shards/12",
		PlacementPrefix(orders) + "shards/1024",
		PlacementPrefix(orders) + "shards/-001",
		PlacementPrefix(orders) + "shards",
		PlacementPrefix(orders) + "other",
		PlacementPrefix(orders) + "shards/0001/x",
	} {
		if _, err := parseKey(key); !errors.Is(err, ErrMalformed) {
			t.Errorf("parseKey(%q): %v, want ErrMalformed", key, err)
		}
	}
}

func FuzzParseKey(f *testing.F) {
	f.Add(AssignmentKey(cluster.ShardID{Object: orders, Shard: 5}))
	f.Add(UnplacedKey(sessions))
	f.Add(BrokerKey("b1"))
	f.Fuzz(func(t *testing.T, key string) {
		k, err := parseKey(key)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("an error not matching ErrMalformed: %v", err)
			}
			return
		}
		var again string
		switch k.kind {
		case keyBroker:
			again = BrokerKey(k.broker)
		case keyCatalog:
			again = CatalogKey(k.shard.Object)
		case keyAssignment:
			again = AssignmentKey(k.shard)
		case keyUnplaced:
			again = UnplacedKey(k.shard.Object)
		default:
			return
		}
		if again != key {
			t.Fatalf("%q parsed as %+v, which makes %q", key, k, again)
		}
	})
}
