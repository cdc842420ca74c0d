package broker

import (
	"slices"
	"testing"

	"github.com/felixbroker/felix/netio/wire"
)

// A broker in a cluster answers BROKER_LIST with every registered broker
// at the client address it registered.
func TestBrokerListNamesEveryRegisteredBroker(t *testing.T) {
	s := sharedStore(t)
	a, b := start(t, clustered("a", s, Config{})), start(t, clustered("b", s, Config{}))
	waitView(t, a.View(), "a sees a and b", registered(a.View(), "a", "b"))
	want := []wire.BrokerInfo{{ID: "a", Addr: a.Addr().String()}, {ID: "b", Addr: b.Addr().String()}}
	if got := a.node.brokerList(); !slices.Equal(got, want) {
		t.Fatalf("BROKER_LIST at a: %+v, want %+v", got, want)
	}
}
