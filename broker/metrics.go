package broker

import (
	"github.com/felixbroker/felix/netio"
	"github.com/felixbroker/felix/observe"
)

// metrics are a broker's metrics. They exist before its engine opens, so
// the shard logs and the server count from their first record; the
// scrape-time families are registered once every component is up.
type metrics struct {
	reg *observe.Registry
	log *observe.LogObserver // engine.Options.Observer
	net *netio.Metrics       // netio.Config.Metrics, with ack latency
}

func newMetrics() *metrics {
	reg := observe.NewRegistry()
	return &metrics{reg: reg, log: observe.NewLogObserver(reg), net: observe.NewNetMetrics(reg)}
}

// register adds the families read from b's components at scrape time:
// observe's, then the cluster's (metrics_cluster.go). b has an admin
// server (it calls this).
func (m *metrics) register(b *Broker) {
	observe.RegisterBroker(m.reg, observe.Broker{
		Version: b.cfg.Version, IOPath: b.ioPath(),
		Engine: b.engine, Net: m.net, Caches: b.caches, Groups: b.groups,
	})
	var fwd *netio.ForwardMetrics
	if b.node != nil {
		fwd = b.node.forwarder.Metrics()
		registerClusterGauges(m.reg, b.node.view, b.admin.unready)
		registerReplication(m.reg, b.node.replicas)
	}
	registerForwarding(m.reg, fwd, m.net)
}
