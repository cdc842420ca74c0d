package workload

import (
	"context"
	"crypto/tls"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/felixbroker/felix/bench"
	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/engine/shardlog"
)

// Target is a running broker (or a cluster's seed) that the network
// workloads drive.
type Target struct {
	Addr  string
	Token string
	// TLS, when set, makes every connection speak TLS with it (to a
	// broker's TLS listener).
	TLS *tls.Config
	// DataDir is the broker's data directory when it is on this machine:
	// the disk baselines are measured there. Empty skips them.
	DataDir string
	// Tenant and Namespace hold the streams and caches the workloads
	// create (and delete again); default "bench" and "bench".
	Tenant, Namespace string
}

// streamSeq tells apart the streams and caches of one process's workloads.
var streamSeq atomic.Uint64

// dial opens n clients to t, each allowed inflight requests in flight.
func (t Target) dial(ctx context.Context, n, inflight int) ([]*client.Client, error) {
	opts := []client.Option{client.WithName("felix-bench"), client.WithInflightMax(max(inflight, client.DefaultInflightMax))}
	if t.Token != "" {
		opts = append(opts, client.WithToken(t.Token))
	}
	if t.TLS != nil {
		opts = append(opts, client.WithTLS(t.TLS))
	}
	var out []*client.Client
	for range n {
		c, err := client.Dial(ctx, t.Addr, opts...)
		if err != nil {
			closeAll(out)
			return nil, fmt.Errorf("felix/bench/workload: connecting to %s: %w", t.Addr, err)
		}
		out = append(out, c)
	}
	return out, nil
}

func closeAll(cs []*client.Client) {
	for _, c := range cs {
		c.Close()
	}
}

// createStream makes a fresh durable single-shard stream at mode; the
// caller deletes it.
func (t Target) createStream(ctx context.Context, c *client.Client, kind string, mode shardlog.FsyncMode) (client.Stream, error) {
	s := t.fresh(kind)
	cfg := client.StreamConfig{Shards: 1, Fsync: clientFsync(mode)}
	if _, err := c.CreateStream(ctx, s, cfg); err != nil {
		return s, fmt.Errorf("felix/bench/workload: creating %s: %w", s, err)
	}
	return s, nil
}

// fresh names a stream or cache of kind no other workload of this
// process, nor an earlier run, has used.
func (t Target) fresh(kind string) client.Stream {
	s := client.Stream{Tenant: t.Tenant, Namespace: t.Namespace,
		Name: kind + "-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "-" + strconv.FormatUint(streamSeq.Add(1), 10)}
	if s.Tenant == "" {
		s.Tenant = "bench"
	}
	if s.Namespace == "" {
		s.Namespace = "bench"
	}
	return s
}

func clientFsync(m shardlog.FsyncMode) client.Fsync {
	switch m.Kind {
	case shardlog.FsyncNone:
		return client.Fsync{Kind: client.FsyncNone}
	case shardlog.FsyncOnCommit:
		return client.Fsync{Kind: client.FsyncOnCommit}
	}
	return client.Fsync{Kind: client.FsyncPeriodic, Interval: m.Interval}
}

// deleteStream removes a workload's stream, on a context of its own: the
// run's may be done.
func deleteStream(c *client.Client, s client.Stream) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = c.DeleteStream(ctx, s)
}

// machineOf describes this machine and, when known, the broker's disk.
func (t Target) machineOf() *bench.Machine {
	m := bench.DescribeMachine(t.DataDir)
	if t.DataDir == "" {
		m.DataDir = ""
	}
	return &m
}
