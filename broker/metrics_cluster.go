package broker

import (
	"sync"

	"github.com/felixbroker/felix/cluster/control"
	"github.com/felixbroker/felix/netio"
	"github.com/felixbroker/felix/observe"
)

// registerForwarding adds the counters of what this broker forwarded to
// the leaders of other brokers' shards (the forwarder's, none for a
// broker alone: the family exists with no series) and of what it served
// for other brokers on relay connections (netio.Metrics: zero alone).
func registerForwarding(r *observe.Registry, fwd *netio.ForwardMetrics, net *netio.Metrics) {
	r.Collect("felix_forwarded_requests_total", observe.TypeCounter,
		"Requests forwarded to the broker leading their shard, by outcome: sent (handed to the peer transport), "+
			"answered and failed (of those sent: an answer, or none, timed out or the connection lost, so maybe applied), "+
			"refused (of those answered: the leader's error), not_sent (the transport refused) and no_leader (none known). "+
			"They overlap: do not add them up.",
		func(emit func(observe.Sample)) {
			if fwd == nil {
				return
			}
			for _, o := range forwardOutcomes(fwd) {
				emit(observe.Sample{Labels: observe.Label("outcome", o.name), Value: float64(o.n)})
			}
		})
	u := func(v uint64) float64 { return float64(v) }
	r.GaugeFunc("felix_relay_connections", "Open relay connections: those serving other brokers' forwarded requests, one per peer and credential.",
		func() float64 { return float64(net.RelayConnsActive.Load()) })
	r.CounterFunc("felix_relay_connections_opened_total", "Relay connections opened for other brokers' forwarded requests.",
		func() float64 { return u(net.RelayConnsOpened.Load()) })
	r.CounterFunc("felix_relay_requests_total", "Forwarded requests served for other brokers on relay connections.",
		func() float64 { return u(net.RelayRequests.Load()) })
	r.CounterFunc("felix_relay_refused_total",
		"Forwarded requests refused before being served: not a FORWARD, a frame type not forwarded, a credential refused, no room.",
		func() float64 { return u(net.RelayRefused.Load()) })
}

type forwardOutcome struct {
	name string
	n    uint64
}

func forwardOutcomes(m *netio.ForwardMetrics) []forwardOutcome {
	return []forwardOutcome{
		{"sent", m.Sent.Load()}, {"answered", m.Answered.Load()}, {"refused", m.Refused.Load()},
		{"failed", m.Failed.Load()}, {"not_sent", m.NotSent.Load()}, {"no_leader", m.NoLeader.Load()},
	}
}

// registerClusterGauges adds what this broker's View says of the cluster
// and of this broker's part in it. They are registered only in a cluster:
// a broker alone has none of them, rather than a felix_cluster_ready of 0
// to alert on. unready is the admin server's.
func registerClusterGauges(r *observe.Registry, v *control.View, unready func() (string, bool)) {
	c := &viewCounts{view: v}
	r.GaugeFunc("felix_cluster_brokers", "Brokers registered in the cluster, as this broker's view sees them.",
		func() float64 { return float64(c.get().brokers) })
	r.GaugeFunc("felix_cluster_shards_held", "Shards this broker holds a replica of, as its view of the cluster places them.",
		func() float64 { return float64(c.get().held) })
	r.GaugeFunc("felix_cluster_shards_led", "Shards this broker's replica leads, as its view of the cluster says.",
		func() float64 { return float64(c.get().led) })
	r.GaugeFunc("felix_cluster_ready", "1 while the broker is ready (what /readyz says), 0 otherwise.", func() float64 {
		if why, _ := unready(); why != "" {
			return 0
		}
		return 1
	})
}

// viewCounts are the View's figures the gauges read, counted again only
// once the View has changed: a scrape reads three of them, and Status
// copies the whole catalog.
type viewCounts struct {
	view *control.View

	mu     sync.Mutex
	seen   <-chan struct{} // the View's Changed when they were counted
	counts clusterCounts
}

type clusterCounts struct{ brokers, held, led int }

func (c *viewCounts) get() clusterCounts {
	c.mu.Lock()
	defer c.mu.Unlock()
	changed := c.view.Changed() // taken before reading: a change meanwhile counts again next time
	if changed == c.seen {
		return c.counts
	}
	c.seen = changed
	n := clusterCounts{brokers: len(c.view.Status().Brokers)}
	for _, s := range c.view.Local() {
		n.held++
		if s.Leader {
			n.led++
		}
	}
	c.counts = n
	return n
}
