package store

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"go.uber.org/zap"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3client"
)

// EmbedConfig configures an etcd member run inside this process.
type EmbedConfig struct {
	// Name is the member's name, its key in InitialCluster; "" is "felix".
	Name string
	// Dir holds the member's data (created if missing). Required.
	Dir string
	// InitialCluster is the members of a new cluster, "name=peerURL,...";
	// "" is a cluster of one. It is read only when Dir holds no member yet.
	InitialCluster string
	// PeerURL is where this member listens for and is reached by its
	// peers; "" is its URL in InitialCluster, or for a cluster of one
	// http://127.0.0.1:0 (any free port: it has no peers).
	PeerURL string
	// ClientURL is where it serves etcd clients (brokers that are not
	// members, etcdctl); "" is http://127.0.0.1:0 (ClientURL() reports the
	// port). This process's own store talks to the member in process.
	ClientURL string
	// ClusterToken tells clusters apart on a shared network; "" is "felix".
	ClusterToken string
	// TickMs and ElectionMs are etcd's heartbeat and election timeout; 0 is
	// etcd's 100 and 1000 for a cluster of several, and 10 and 100 for a
	// cluster of one, which has no peer to take for dead and then starts
	// in about 70 ms instead of 500 (BenchmarkEmbeddedStart). Tests use 10
	// and 100 throughout; a lease's TTL is then at least one second (etcd's
	// minimum is 1.5 election timeouts, rounded up to a second).
	TickMs, ElectionMs uint
	// HistoryRevisionsMax is how many revisions etcd keeps for watches
	// (auto-compaction by revision); 0 is what the in-memory store keeps.
	HistoryRevisionsMax int64
	// UnsafeNoFsync skips etcd's fsyncs: for tests only.
	UnsafeNoFsync bool
	// Logger receives etcd's logs at LogLevel and above (nil: slog.LevelWarn);
	// nil discards them. Failures reach the caller either way: StartEmbedded
	// returns them, and Err reports those of a running member.
	Logger   *slog.Logger
	LogLevel slog.Leveler
}

// Embedded is an etcd member running in this process, and the Store on it.
type Embedded struct {
	etcd      *embed.Etcd
	store     *Etcd
	closeOnce sync.Once
}

// StartEmbedded starts the member and waits, within ctx, until it serves:
// at once for a cluster of one, when a quorum of InitialCluster has started
// for more (start the members concurrently).
func StartEmbedded(ctx context.Context, cfg EmbedConfig) (*Embedded, error) {
	ecfg, err := cfg.etcdConfig()
	if err != nil {
		return nil, err
	}
	e, err := embed.StartEtcd(ecfg) // on an error it has closed itself
	if err != nil {
		return nil, fmt.Errorf("felix/cluster/store: start embedded etcd %q in %s: %w", ecfg.Name, cfg.Dir, err)
	}
	if err := awaitReady(ctx, e); err != nil {
		closeUnready(e)
		return nil, fmt.Errorf("felix/cluster/store: embedded etcd %q in %s: %w", ecfg.Name, cfg.Dir, err)
	}
	c, err := memberClient(e, zapLogger(cfg.Logger, cfg.LogLevel))
	if err != nil {
		closeUnready(e)
		return nil, fmt.Errorf("felix/cluster/store: a client of embedded etcd %q: %w", ecfg.Name, err)
	}
	m := &Embedded{etcd: e}
	m.store = newEtcd(c, m.closeMember)
	return m, nil
}

// memberClient is the member's own client: in process for a cluster of
// one, and over gRPC on the member's client URL for a member of several,
// since etcd checks a watch's "require a leader" in its gRPC interceptor
// only, and an in-process watch on a member cut off from its leader would
// go quiet instead of failing.
func memberClient(e *embed.Etcd, lg *zap.Logger) (*clientv3.Client, error) {
	if len(e.Server.Cluster().Members()) == 1 {
		return v3client.New(e.Server), nil
	}
	return clientv3.New(clientv3.Config{
		Endpoints:   []string{clientURL(e)},
		DialTimeout: dialTimeoutDefault,
		Logger:      lg,
	})
}

func clientURL(e *embed.Etcd) string { return "http://" + e.Clients[0].Addr().String() }

func awaitReady(ctx context.Context, e *embed.Etcd) error {
	select {
	case <-e.Server.ReadyNotify():
		return nil
	case err := <-e.Err():
		return fmt.Errorf("failed while starting: %w", err)
	case <-ctx.Done():
		return fmt.Errorf("not ready: %w", ctx.Err())
	}
}

// closeUnready closes a member that never became ready. embed's Close
// alone would hang: it waits for its client servers, which wait for the
// server to be ready or stopping, and it stops the server only after. So
// stop the server first (Close's own Stop then returns at once).
func closeUnready(e *embed.Etcd) {
	e.Server.Stop()
	e.Close()
}

// Store is the Store on this member: through an in-process client (no
// socket) for a cluster of one, over loopback gRPC for a member of
// several. Closing it closes the member.
func (m *Embedded) Store() *Etcd { return m.store }

// ClientURL is the URL the member serves clients on, with its real port.
func (m *Embedded) ClientURL() string { return clientURL(m.etcd) }

// PeerURL is the URL the member listens for peers on, with its real port.
func (m *Embedded) PeerURL() string { return "http://" + m.etcd.Peers[0].Addr().String() }

// Err reports a failure of the running member; it is closed when the
// member stops.
func (m *Embedded) Err() <-chan error { return m.etcd.Err() }

// Close closes the store's client, then the member (in that order, or the
// member waits seconds for the client's streams), once. Clients elsewhere
// (Dial on ClientURL) should be closed first for the same reason.
func (m *Embedded) Close() error { return m.store.Close() }

func (m *Embedded) closeMember() { m.closeOnce.Do(m.etcd.Close) }

// etcdConfig is embed's config for cfg, quiet unless cfg.Logger is set.
func (cfg EmbedConfig) etcdConfig() (*embed.Config, error) {
	if cfg.Dir == "" {
		return nil, fmt.Errorf("%w: an embedded etcd needs a directory", ErrInvalid)
	}
	e := embed.NewConfig()
	e.Name = orDefault(cfg.Name, "felix")
	e.Dir = cfg.Dir
	e.InitialClusterToken = orDefault(cfg.ClusterToken, "felix")
	if err := cfg.setURLs(e); err != nil {
		return nil, err
	}
	cfg.setTicks(e)
	history := cfg.HistoryRevisionsMax
	if history <= 0 {
		history = historyRevisionsDefault
	}
	e.AutoCompactionMode = embed.CompactorModeRevision
	e.AutoCompactionRetention = strconv.FormatInt(history, 10)
	e.UnsafeNoFsync = cfg.UnsafeNoFsync
	e.EnableGRPCGateway = false
	e.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zapLogger(cfg.Logger, cfg.LogLevel))
	return e, nil
}

// Ticks of a cluster of one, where nothing is gained by waiting longer to
// elect the only member.
const (
	aloneTickMs     = 10
	aloneElectionMs = 100
)

func (cfg EmbedConfig) setTicks(e *embed.Config) {
	if cfg.InitialCluster == "" {
		e.TickMs, e.ElectionMs = aloneTickMs, aloneElectionMs
	}
	if cfg.TickMs != 0 {
		e.TickMs = cfg.TickMs
	}
	if cfg.ElectionMs != 0 {
		e.ElectionMs = cfg.ElectionMs
	}
}

// setURLs fills in the peer and client URLs and the initial cluster.
func (cfg EmbedConfig) setURLs(e *embed.Config) error {
	peer := cfg.PeerURL
	initial := cfg.InitialCluster
	if peer == "" {
		peer = memberURL(initial, e.Name)
	}
	if peer == "" && initial != "" {
		return fmt.Errorf("%w: member %q is not in the initial cluster %q", ErrInvalid, e.Name, initial)
	}
	peer = orDefault(peer, "http://127.0.0.1:0")
	initial = orDefault(initial, e.Name+"="+peer)
	peerURL, err := url.Parse(peer)
	if err != nil {
		return fmt.Errorf("%w: peer URL %q: %v", ErrInvalid, peer, err)
	}
	clientURL, err := url.Parse(orDefault(cfg.ClientURL, "http://127.0.0.1:0"))
	if err != nil {
		return fmt.Errorf("%w: client URL %q: %v", ErrInvalid, cfg.ClientURL, err)
	}
	e.ListenPeerUrls, e.AdvertisePeerUrls = []url.URL{*peerURL}, []url.URL{*peerURL}
	e.ListenClientUrls, e.AdvertiseClientUrls = []url.URL{*clientURL}, []url.URL{*clientURL}
	e.InitialCluster = initial
	return nil
}

// memberURL is name's URL in an initial cluster "name=url,...", or "".
func memberURL(initial, name string) string {
	for member := range strings.SplitSeq(initial, ",") {
		if n, u, ok := strings.Cut(strings.TrimSpace(member), "="); ok && n == name {
			return u
		}
	}
	return ""
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
