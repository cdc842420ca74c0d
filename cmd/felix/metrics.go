package main

import (
	"log/slog"

	"github.com/felixbroker/felix/netio"
	"github.com/felixbroker/felix/observe"
)

// brokerMetrics are a broker's metrics. They exist before its engine
// opens, so the shard logs and the server count from their first record;
// the scrape-time families are registered once every component is up.
type brokerMetrics struct {
	reg *observe.Registry
	log *observe.LogObserver // engine.Options.Observer
	net *netio.Metrics       // netio.Config.Metrics, with ack latency
}

func newBrokerMetrics() *brokerMetrics {
	reg := observe.NewRegistry()
	return &brokerMetrics{reg: reg, log: observe.NewLogObserver(reg), net: observe.NewNetMetrics(reg)}
}

// register adds the families read from b's components at scrape time.
func (m *brokerMetrics) register(b *broker) {
	observe.RegisterBroker(m.reg, observe.Broker{
		Version: version, IOPath: string(b.driver.Kind()),
		Engine: b.engine, Net: m.net, Caches: b.caches, Groups: b.groups,
	})
}

// throttled folds runs of identical warnings and errors (a failing disk
// reports every fsync) into one line per 10 seconds with a count.
func throttled(l *slog.Logger) *slog.Logger {
	if l == nil {
		return nil
	}
	return slog.New(observe.Throttle(l.Handler(), observe.ThrottleOptions{}))
}
