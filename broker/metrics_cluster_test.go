package broker

import (
	"bufio"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/netio"
	"github.com/felixbroker/felix/observe"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
)

// scrape is the admin server's /metrics at addr.
func scrape(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// sample is the value of series (`name` or `name{labels}`, as written) in
// an exposition; it fails the test when the series is not there.
func sample(t *testing.T, exposition, series string) float64 {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(exposition))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", series, err)
			}
			return f
		}
	}
	t.Fatalf("no series %s in:\n%s", series, exposition)
	return 0
}

// A publish through the broker that does not lead its shard moves that
// broker's forwarded counters (sent, answered) and opens a relay
// connection on the leader; the cluster gauges say two brokers, the
// shard held and led by the leader alone, both ready. promlint finds
// nothing to say of either exposition.
func TestForwardingAndClusterMetricsAppearAndMove(t *testing.T) {
	s := sharedStore(t)
	a := start(t, clustered("a", s, Config{AdminAddr: "127.0.0.1:0"}))
	b := start(t, clustered("b", s, Config{AdminAddr: "127.0.0.1:0"}))
	waitView(t, b.View(), "b sees a and b", registered(b.View(), "a", "b"))
	id := engine.StreamID{Tenant: testStream.Tenant, Namespace: testStream.Namespace, Name: testStream.Name}
	if _, err := a.Engine().CreateStream(id, engine.StreamConfig{Shards: 1, Durable: true}); err != nil {
		t.Fatal(err)
	}
	for _, x := range []*Broker{a, b} {
		waitView(t, x.View(), "the shard placed", func() bool { return placedSeen(x, id, 1) })
	}
	leader, other := a, b
	if local, _ := b.View().Leader(id, 0); local {
		leader, other = b, a
	}
	before := scrape(t, other.AdminAddr())
	for _, outcome := range []string{"sent", "answered", "refused", "failed", "not_sent", "no_leader"} {
		if v := sample(t, before, `felix_forwarded_requests_total{outcome="`+outcome+`"}`); v != 0 {
			t.Fatalf("forwarded %s before any publish: %v", outcome, v)
		}
	}
	if _, err := dial(t, other).Publish(testCtx(t), testStream, []byte("forwarded")); err != nil {
		t.Fatal(err)
	}
	after := scrape(t, other.AdminAddr())
	for _, outcome := range []string{"sent", "answered"} {
		if v := sample(t, after, `felix_forwarded_requests_total{outcome="`+outcome+`"}`); v != 1 {
			t.Fatalf("forwarded %s after one forwarded publish: %v\n%s", outcome, v, after)
		}
	}
	led := scrape(t, leader.AdminAddr())
	if v := sample(t, led, "felix_relay_connections_opened_total"); v != 1 {
		t.Fatalf("the leader opened %v relay connections for one forwarded publish", v)
	}
	for x, want := range map[string]float64{"felix_cluster_brokers": 2, "felix_cluster_shards_held": 1, "felix_cluster_shards_led": 1, "felix_cluster_ready": 1} {
		if v := sample(t, led, x); v != want {
			t.Fatalf("the leader's %s: %v, want %v", x, v, want)
		}
	}
	for x, want := range map[string]float64{"felix_cluster_shards_held": 0, "felix_cluster_shards_led": 0, "felix_cluster_ready": 1} {
		if v := sample(t, after, x); v != want {
			t.Fatalf("the other's %s: %v, want %v", x, v, want)
		}
	}
	for _, exposition := range []string{after, led} {
		lint(t, exposition)
	}
}

// Each relay and forwarding series reads its own counter.
func TestForwardingSeriesReadTheirCounters(t *testing.T) {
	r := observe.NewRegistry()
	var fwd netio.ForwardMetrics
	var net netio.Metrics
	for i, c := range []interface{ Add(uint64) uint64 }{&fwd.Sent, &fwd.Answered, &fwd.Refused, &fwd.Failed, &fwd.NotSent, &fwd.NoLeader,
		&net.RelayConnsOpened, &net.RelayRequests, &net.RelayRefused} {
		c.Add(uint64(i + 1))
	}
	net.RelayConnsActive.Add(10)
	registerForwarding(r, &fwd, &net)
	var out strings.Builder
	if err := r.WritePrometheus(&out); err != nil {
		t.Fatal(err)
	}
	for series, want := range map[string]float64{
		`felix_forwarded_requests_total{outcome="sent"}`: 1, `felix_forwarded_requests_total{outcome="answered"}`: 2,
		`felix_forwarded_requests_total{outcome="refused"}`: 3, `felix_forwarded_requests_total{outcome="failed"}`: 4,
		`felix_forwarded_requests_total{outcome="not_sent"}`: 5, `felix_forwarded_requests_total{outcome="no_leader"}`: 6,
		"felix_relay_connections_opened_total": 7, "felix_relay_requests_total": 8, "felix_relay_refused_total": 9,
		"felix_relay_connections": 10,
	} {
		if v := sample(t, out.String(), series); v != want {
			t.Errorf("%s: %v, want %v", series, v, want)
		}
	}
}

// A broker alone has the forwarding families (no forwarded series, relay
// counters at 0) and none of the cluster gauges.
func TestABrokerAloneHasNoClusterGauges(t *testing.T) {
	b := start(t, Config{AdminAddr: "127.0.0.1:0"})
	m := scrape(t, b.AdminAddr())
	if v := sample(t, m, "felix_relay_requests_total"); v != 0 {
		t.Fatalf("relay requests alone: %v", v)
	}
	for _, absent := range []string{"felix_cluster_", "felix_forwarded_requests_total{"} {
		if strings.Contains(m, absent) {
			t.Fatalf("a broker alone exposes %s:\n%s", absent, m)
		}
	}
	if !strings.Contains(m, "# TYPE felix_forwarded_requests_total counter") {
		t.Fatal("a broker alone lacks the forwarded family")
	}
}

func lint(t *testing.T, exposition string) {
	t.Helper()
	problems, err := promlint.New(strings.NewReader(exposition)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
}
