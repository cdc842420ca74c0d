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
// process is up) and /readyz (recovery has finished and the broker is
// accepting connections).
type adminServer struct {
	ln      net.Listener
	srv     *http.Server
	ready   atomic.Bool
	metrics atomic.Pointer[observe.Registry] // nil until the broker is up
	logger  *slog.Logger
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
	a.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := a.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("admin server stopped", "err", err)
		}
	}()
	return a, nil
}

func (a *adminServer) addr() string { return a.ln.Addr().String() }

func (a *adminServer) setReady() { a.ready.Store(true) }

func (a *adminServer) serveReady(w http.ResponseWriter, _ *http.Request) {
	if !a.ready.Load() {
		http.Error(w, "recovering\n", http.StatusServiceUnavailable)
		return
	}
	w.Write([]byte("ready\n"))
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
}

func (a *adminServer) close(ctx context.Context) error {
	a.ready.Store(false)
	return a.srv.Shutdown(ctx)
}
