package broker

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/felixbroker/felix/observe"
)

// adminServer serves /metrics (Prometheus text format), /healthz (the
// process is up), /readyz (recovery has finished and the broker is
// accepting connections; in a cluster, also what notReady says) and
// /cluster (admin_cluster.go).
type adminServer struct {
	ln       net.Listener
	srv      *http.Server
	ready    atomic.Bool
	notReady atomic.Pointer[func() string] // nil: ready means ready
	stopping atomic.Bool
	metrics  atomic.Pointer[observe.Registry] // nil until the broker is up
	cluster  atomic.Pointer[clusterSource]    // nil until the broker is up
	logger   *slog.Logger
}

func startAdmin(addr string, logger *slog.Logger) (*adminServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	a := &adminServer{ln: ln, logger: logger}
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", a.serveMetrics)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok\n")) })
	mux.HandleFunc("/readyz", a.serveReady)
	mux.HandleFunc("GET /cluster", a.serveCluster)
	a.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := a.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("admin server stopped", "err", err)
		}
	}()
	return a, nil
}

func (a *adminServer) addr() string { return a.ln.Addr().String() }

// setReady says the broker has started. notReady, when not nil, is asked
// at each /readyz from then on: "" is ready, anything else is why not
// (the cluster's conditions, which hold only after Start).
func (a *adminServer) setReady(notReady func() string) {
	if notReady != nil {
		a.notReady.Store(&notReady)
	}
	a.ready.Store(true)
}

// serveReady answers 200 "ready", or 503 with the reason: "recovering"
// until Start has finished, "stopping" once Stop has begun, or the
// cluster's.
func (a *adminServer) serveReady(w http.ResponseWriter, _ *http.Request) {
	if why, inCluster := a.unready(); why != "" {
		if inCluster {
			why = "not ready: " + why
		}
		http.Error(w, why, http.StatusServiceUnavailable)
		return
	}
	w.Write([]byte("ready\n"))
}

// unready is "" when the broker is ready, else why not: startOrStop's
// word before Start has finished and once Stop has begun, or the
// cluster's (inCluster) in between. /readyz, /cluster and
// felix_cluster_ready all say what it says.
func (a *adminServer) unready() (why string, inCluster bool) {
	if !a.ready.Load() {
		return a.startOrStop(), false
	}
	if f := a.notReady.Load(); f != nil {
		if why := (*f)(); why != "" {
			return why, true
		}
	}
	return "", false
}

func (a *adminServer) startOrStop() string {
	if a.stopping.Load() {
		return "stopping"
	}
	return "recovering"
}

// setStopping makes /readyz say 503 from the start of Stop.
func (a *adminServer) setStopping() {
	a.stopping.Store(true)
	a.ready.Store(false)
}

func (a *adminServer) serveMetrics(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	if reg := a.metrics.Load(); reg != nil {
		_ = reg.WritePrometheus(w) // a failed write is the scraper gone
	}
}

// register exposes the broker's figures. They are read at scrape time from
// the components' own counters, so the hot paths pay nothing for them.
func (a *adminServer) register(b *Broker) {
	b.metrics.register(b)
	a.metrics.Store(b.metrics.reg)
	a.cluster.Store(&clusterSource{node: b.node})
}

func (a *adminServer) close(ctx context.Context) error {
	a.setStopping()
	return a.srv.Shutdown(ctx)
}
