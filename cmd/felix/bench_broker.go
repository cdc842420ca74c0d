package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/felixbroker/felix/bench/workload"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/netio"
	"github.com/felixbroker/felix/ring"
)

// benchBrokerStopTimeout bounds the embedded broker's graceful stop.
const benchBrokerStopTimeout = 30 * time.Second

// benchBroker is the broker the workloads drive: the one at --addr, or one
// started here (the same code as `felix serve`) on a temporary data
// directory under dir, removed again by stop.
type benchBroker struct {
	target workload.Target
	broker *served // nil for a broker at --addr
	tmpDir string
}

func startBenchBroker(t benchTarget, dir string, io ring.Mode) (*benchBroker, error) {
	target, err := t.target()
	if err != nil {
		return nil, err
	}
	if t.Addr != "" {
		return &benchBroker{target: target}, nil
	}
	tmp, err := os.MkdirTemp(dir, "felix-bench-broker-")
	if err != nil {
		return nil, fmt.Errorf("bench: a data directory for the embedded broker: %w", err)
	}
	b, err := startBroker(embeddedConfig(tmp, io))
	if err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("bench: starting the embedded broker: %w", err)
	}
	return &benchBroker{target: workload.Target{Addr: b.Addr().String(), DataDir: tmp}, broker: b, tmpDir: tmp}, nil
}

// embeddedConfig is `felix serve`'s defaults on an ephemeral port, with no
// admin server, logging only errors to standard error.
func embeddedConfig(dataDir string, io ring.Mode) serveConfig {
	return serveConfig{
		addr: "127.0.0.1:0", dataDir: dataDir, brokerID: "bench",
		fsync: shardlog.Periodic(shardlog.DefaultPeriodicInterval), segmentBytes: shardlog.DefaultSegmentBytes,
		ioMode: io, maxFrameBytes: 4 << 20,
		handshakeTimeout: netio.DefaultHandshakeTimeout, idleTimeout: netio.DefaultIdleTimeout,
		logger: throttled(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))),
	}
}

func (b *benchBroker) stop() error {
	if b.broker == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), benchBrokerStopTimeout)
	defer cancel()
	err := b.broker.Stop(ctx)
	if rmErr := os.RemoveAll(b.tmpDir); err == nil {
		err = rmErr
	}
	return err
}
