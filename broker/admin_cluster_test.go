package broker

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/felixbroker/felix/engine"
)

// getCluster is GET /cluster on addr: its status code and body.
func getCluster(t *testing.T, addr string) (int, []byte) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/cluster")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("/cluster's Content-Type: %q", ct)
	}
	return resp.StatusCode, body
}

// /cluster on either of two brokers says who it is, that it is ready,
// who holds the control plane, both brokers with their addresses, and a
// stream created through the other placed with its leader's client
// address.
func TestClusterEndpointDescribesTheCluster(t *testing.T) {
	s := sharedStore(t)
	a := start(t, clustered("a", s, Config{AdminAddr: "127.0.0.1:0"}))
	b := start(t, clustered("b", s, Config{AdminAddr: "127.0.0.1:0"}))
	waitView(t, b.View(), "b sees a and b", registered(b.View(), "a", "b"))
	id := engine.StreamID{Tenant: "t", Namespace: "n", Name: "status"}
	if _, err := a.Engine().CreateStream(id, engine.StreamConfig{Shards: 2, Durable: true}); err != nil {
		t.Fatal(err)
	}
	waitView(t, b.View(), "b sees the stream placed and the control plane held", func() bool {
		return placedSeen(b, id, 2) && b.View().Status().ControlPlane != ""
	})
	code, body := getCluster(t, b.AdminAddr())
	var st ClusterStatusJSON
	if err := json.Unmarshal(body, &st); err != nil || code != http.StatusOK {
		t.Fatalf("/cluster: %d %v\n%s", code, err, body)
	}
	if st.Version != ClusterStatusVersion || st.Broker != "b" || !st.Ready || st.ControlPlane == nil {
		t.Fatalf("/cluster's header: %+v", st)
	}
	addrs := map[string]string{"a": a.Addr().String(), "b": b.Addr().String()}
	peers := map[string]string{"a": a.PeerAddr().String(), "b": b.PeerAddr().String()}
	if len(st.Brokers) != 2 {
		t.Fatalf("brokers: %+v", st.Brokers)
	}
	for _, br := range st.Brokers {
		if br.ClientAddr != addrs[br.ID] || br.PeerAddr != peers[br.ID] || !br.Live || br.DiskID == "" {
			t.Fatalf("broker %+v; want client %s, peer %s", br, addrs[br.ID], peers[br.ID])
		}
	}
	if len(st.Objects) != 1 || st.Objects[0].Name != "status" || st.Objects[0].State != ObjectPlaced || len(st.Objects[0].Shards) != 2 {
		t.Fatalf("objects: %s", body)
	}
	for _, sh := range st.Objects[0].Shards {
		if sh.Leader == nil || sh.Leader.ClientAddr != addrs[sh.Leader.Broker] || !sh.LeaderLive || sh.Generation == 0 {
			t.Fatalf("shard %d: %+v, leader %+v", sh.Shard, sh, sh.Leader)
		}
	}
}

// A broker alone has no cluster status: 404, saying so in JSON.
func TestClusterEndpointOfABrokerAloneIsNotFound(t *testing.T) {
	b := start(t, Config{AdminAddr: "127.0.0.1:0"})
	code, body := getCluster(t, b.AdminAddr())
	var e ClusterErrorJSON
	if err := json.Unmarshal(body, &e); err != nil || code != http.StatusNotFound || e.Error != clusterAloneError {
		t.Fatalf("/cluster of a broker alone: %d %v %s", code, err, body)
	}
}
