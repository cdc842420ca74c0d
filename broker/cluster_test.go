package broker

import (
	"errors"
	"testing"

	"github.com/felixbroker/felix/engine"
)

// Three brokers on one store each register, with their client and peer
// addresses and disk ids, and see each other; one stopped revokes its
// registration, so the others see it gone at once (not after its TTL).
func TestBrokersOfAClusterRegisterAndAStoppedOneLeaves(t *testing.T) {
	s := sharedStore(t)
	a := start(t, clustered("a", s, Config{}))
	b := start(t, clustered("b", s, Config{}))
	c := start(t, clustered("c", s, Config{}))
	waitView(t, a.View(), "a sees a, b and c", registered(a.View(), "a", "b", "c"))
	for _, reg := range a.View().Status().Brokers {
		want := map[string]*Broker{"a": a, "b": b, "c": c}[reg.ID]
		if reg.ClientAddr != want.Addr().String() || reg.PeerAddr != want.PeerAddr().String() || reg.DiskID != want.DiskID() || reg.DiskID == "" {
			t.Fatalf("%s registered %+v; it serves on %s, peers on %s, disk %q", reg.ID, reg, want.Addr(), want.PeerAddr(), want.DiskID())
		}
	}
	stop(t, b)
	waitView(t, a.View(), "b gone from a's view", registered(a.View(), "a", "c"))
	waitView(t, c.View(), "b gone from c's view", registered(c.View(), "a", "c"))
}

// A cluster takes its ownership from the View: Config.Owner beside
// Cluster is refused, as is a cluster config without an id or with two
// stores.
func TestAClusterConfigIsChecked(t *testing.T) {
	s := sharedStore(t)
	for name, cfg := range map[string]Config{
		"an owner":  {Owner: engine.Alone{}},
		"no id":     clustered("", s, Config{}),
		"no store":  {Cluster: &ClusterConfig{BrokerID: "a"}},
		"two store": {Cluster: &ClusterConfig{BrokerID: "a", Store: s, Endpoints: []string{"http://127.0.0.1:1"}}},
	} {
		if cfg.Cluster == nil {
			cfg = clustered("a", s, cfg)
		}
		if b, err := Start(cfg); !errors.Is(err, ErrClusterConfig) {
			if err == nil {
				stop(t, b)
			}
			t.Fatalf("%s: %v, want ErrClusterConfig", name, err)
		}
	}
}
