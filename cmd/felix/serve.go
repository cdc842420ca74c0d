package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/felixbroker/felix/broker"
	"github.com/felixbroker/felix/cluster/store"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/group"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/netio"
	"github.com/felixbroker/felix/netio/wire"
	"github.com/felixbroker/felix/ring"
	"github.com/felixbroker/felix/units"
)

type serveCmd struct {
	Addr              *string `help:"Address clients connect to (default 127.0.0.1:7117)." placeholder:"HOST:PORT"`
	AdminAddr         *string `help:"HTTP address of /metrics, /healthz and /readyz; empty turns it off (default 127.0.0.1:7118)." placeholder:"HOST:PORT"`
	Data              *string `help:"Data directory; empty keeps everything in memory (default ./felix-data)." placeholder:"DIR"`
	Fsync             *string `help:"Default FsyncMode: none, periodic[:interval], on_commit (default periodic:100ms)."`
	RetentionMaxAge   *string `name:"retention-max-age" help:"Default retention by age, e.g. 168h (default 0: unbounded)."`
	RetentionMaxBytes *string `name:"retention-max-bytes" help:"Default retention by size per shard in bytes (default 0: unbounded)."`
	DeadLetterMaxAge  *string `name:"dead-letter-max-age" help:"How long consumer groups keep a dead letter, e.g. 336h (default 0: until redriven)."`
	SegmentBytes      *string `help:"Segment size, e.g. 64MiB (default 64 MiB)."`
	IO                *string `name:"io" help:"IO path: auto, uring, portable (default auto)."`
	MaxFrameBytes     *string `help:"Largest frame a client may send (default 4 MiB)."`
	HandshakeTimeout  *string `help:"Close connections that do not complete the handshake within this (default 5s)."`
	IdleTimeout       *string `help:"Close connections idle this long (default 5m)."`
	FrameTimeout      *string `name:"frame-timeout" help:"Close connections whose frame is not whole this long after its first byte; negative: never (default 30s)."`
	MaxConnections    *string `name:"max-connections" help:"Open client connections at most, auth on or off; more are refused with overloaded (default 4096)."`
	MaxInboundBytes   *string `name:"max-inbound-bytes" help:"Bytes the unfinished frames of all connections may hold together; past it connections are shed with overloaded (default 256 MiB)."`
	EventLoops        *string `name:"event-loops" help:"Network event loops (default 0: one per processor but one, at least one)."`
	GroupCommit       *string `name:"group-commit" help:"on: the OnCommit logs of every shard share one flush scheduler, their fdatasyncs submitted together; off: each shard's log syncs alone (default off)."`
	BrokerID          *string `name:"broker-id" help:"This broker's id, unique in its cluster (default felix-1 for a cluster of one; required with --etcd-endpoints, and one of --cluster's names)."`
	Rack              *string `name:"rack" help:"This broker's failure domain: replicas are placed on distinct racks (default none)."`
	PeerAddr          *string `name:"peer-addr" help:"Address other brokers connect to (default --addr's host, loopback for a wildcard, and its port + 2: 127.0.0.1:7119)." placeholder:"HOST:PORT"`
	AdvertiseAddr     *string `name:"advertise-addr" help:"Client address given to other brokers and clients (default the bound --addr)." placeholder:"HOST:PORT"`
	AdvertisePeerAddr *string `name:"advertise-peer-addr" help:"Peer address other brokers dial (default the bound --peer-addr)." placeholder:"HOST:PORT"`
	Cluster           *string `name:"cluster" help:"Brokers of a cluster on embedded etcd members, name=host:port,... (each member's etcd peer address; this broker's --broker-id among the names). Default: a cluster of one." placeholder:"NAME=HOST:PORT,..."`
	EtcdClientAddr    *string `name:"etcd-client-addr" help:"Where the embedded etcd member serves etcd clients (default 127.0.0.1:0)." placeholder:"HOST:PORT"`
	EtcdEndpoints     *string `name:"etcd-endpoints" help:"An external etcd's client URLs, comma-separated, in place of an embedded member." placeholder:"URL[,URL]"`
	EtcdPrefix        *string `name:"etcd-prefix" help:"Prefix of every key in the external etcd (several clusters on one)."`
	ShardLease        *string `name:"shard-lease" help:"Lease of a replicated shard's leader: it heartbeats every quarter of it, and a dead or frozen leader is replaced about 1.5 leases after (default 0: 4s)." placeholder:"DURATION"`
	PublishTimeout    *string `name:"publish-timeout" help:"How long a replicated publish waits for its acknowledgement (a Quorum one for a majority) before it is refused no_quorum or not_leader (default 0: 5s)." placeholder:"DURATION"`
	LogFormat         *string `help:"auto (text on a terminal, JSON otherwise), text, json."`
	LogLevel          *string `help:"debug, info, warn, error."`
	AuthKeys          *string `name:"auth-keys" help:"Files of trusted token public keys (felix token keygen), comma-separated; several keys let keys rotate (default none: auth off)." placeholder:"FILE[,FILE]"`
	TLSAddr           *string `name:"tls-addr" help:"Address of a TLS listener beside the plain one (default none)." placeholder:"HOST:PORT"`
	TLSCert           *string `name:"tls-cert" help:"PEM certificate (chain) of the TLS listener." placeholder:"FILE"`
	TLSKey            *string `name:"tls-key" help:"PEM private key of the TLS listener." placeholder:"FILE"`
	QuotaPublishRate  *string `name:"quota-publish-bytes-per-sec" help:"Default per-tenant publish rate in bytes/s (default 0: unlimited)."`
	QuotaConnections  *string `name:"quota-connections" help:"Default per-tenant open connections, counted with auth on (default 0: unlimited)."`
	QuotaStoredBytes  *string `name:"quota-stored-bytes" help:"Default per-tenant stored bytes (default 0: unlimited)."`
	Config            string  `help:"A TOML config file of the same settings (key = value)." env:"FELIX_CONFIG" type:"existingfile"`
	PrintConfig       bool    `help:"Print the effective settings and where each came from, then exit."`
}

// flags returns the settings given as flags.
func (c *serveCmd) flags() map[string]string {
	out := map[string]string{}
	for key, p := range map[string]*string{
		"addr": c.Addr, "admin-addr": c.AdminAddr, "data": c.Data, "fsync": c.Fsync,
		"retention-max-age": c.RetentionMaxAge, "retention-max-bytes": c.RetentionMaxBytes, "dead-letter-max-age": c.DeadLetterMaxAge,
		"segment-bytes": c.SegmentBytes, "io": c.IO, "max-frame-bytes": c.MaxFrameBytes,
		"handshake-timeout": c.HandshakeTimeout, "idle-timeout": c.IdleTimeout, "event-loops": c.EventLoops, "group-commit": c.GroupCommit,
		"frame-timeout": c.FrameTimeout, "max-connections": c.MaxConnections, "max-inbound-bytes": c.MaxInboundBytes,
		"broker-id": c.BrokerID, "rack": c.Rack, "peer-addr": c.PeerAddr,
		"advertise-addr": c.AdvertiseAddr, "advertise-peer-addr": c.AdvertisePeerAddr, "cluster": c.Cluster,
		"etcd-client-addr": c.EtcdClientAddr, "etcd-endpoints": c.EtcdEndpoints, "etcd-prefix": c.EtcdPrefix,
		"shard-lease": c.ShardLease, "publish-timeout": c.PublishTimeout,
		"log-format": c.LogFormat, "log-level": c.LogLevel,
		"auth-keys": c.AuthKeys, "tls-addr": c.TLSAddr, "tls-cert": c.TLSCert, "tls-key": c.TLSKey,
		"quota-publish-bytes-per-sec": c.QuotaPublishRate, "quota-connections": c.QuotaConnections,
		"quota-stored-bytes": c.QuotaStoredBytes,
	} {
		if p != nil {
			out[key] = *p
		}
	}
	return out
}

// keyFilesNow resolves the settings again, flags, environment and config
// file, and returns the --auth-keys files they name now: a SIGHUP reload
// picks up a file the config file has added since startup.
func (c *serveCmd) keyFilesNow() ([]string, error) {
	st := serveSettings()
	if err := st.resolve(c.Config, osEnv, c.flags()); err != nil {
		return nil, err
	}
	return splitKeyFiles(st.get("auth-keys")), nil
}

func (c *serveCmd) Run() error {
	st := serveSettings()
	if err := st.resolve(c.Config, osEnv, c.flags()); err != nil {
		return err
	}
	quotaTenants, err := loadQuotaFile(st, c.Config)
	if err != nil {
		return err
	}
	cfg, err := parseServeConfig(st)
	if c.PrintConfig {
		// What it prints is what would run: a setting felix serve would
		// refuse is refused here too, after the table that shows it.
		st.print(os.Stdout)
		if err != nil {
			return fmt.Errorf("these settings would not start a broker: %w", err)
		}
		return nil
	}
	if err != nil {
		return err
	}
	cfg.security.quotaTenantSets = quotaTenants
	cfg.security.keyFiles = c.keyFilesNow
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runBroker(ctx, cfg, os.Stdout)
}

// serveConfig is the parsed, checked configuration of a broker.
type serveConfig struct {
	addr, adminAddr, dataDir, brokerID string
	fsync                              shardlog.FsyncMode
	retention                          shardlog.Retention
	deadLetterMaxAge                   time.Duration
	segmentBytes                       int64
	ioMode                             ring.Mode
	maxFrameBytes, eventLoops          int
	groupCommit                        bool
	handshakeTimeout, idleTimeout      time.Duration
	netLimits                          netLimits
	cluster                            clusterSettings
	security                           securityConfig
	logger                             *slog.Logger
}

func parseServeConfig(st *settings) (serveConfig, error) {
	var c serveConfig
	var errs []error
	check := func(key string, err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("--%s: %w", key, err))
		}
	}
	c.addr, c.adminAddr, c.dataDir = st.get("addr"), st.get("admin-addr"), st.get("data")
	var err error
	c.cluster, c.brokerID, err = parseCluster(st, st.get("broker-id"), c.addr)
	if err != nil {
		errs = append(errs, err)
	}
	c.fsync, err = shardlog.ParseFsyncMode(st.get("fsync"))
	check("fsync", err)
	c.retention.MaxAge, err = units.ParseDuration(st.get("retention-max-age"))
	check("retention-max-age", err)
	c.retention.MaxBytes, err = units.ParseBytes(st.get("retention-max-bytes"))
	check("retention-max-bytes", err)
	c.deadLetterMaxAge, err = units.ParseDuration(st.get("dead-letter-max-age"))
	if err == nil && c.deadLetterMaxAge < 0 {
		err = errors.New("must be 0 (kept until redriven) or more")
	}
	check("dead-letter-max-age", err)
	c.segmentBytes, err = units.ParseBytes(st.get("segment-bytes"))
	check("segment-bytes", err)
	c.ioMode, err = ring.ParseMode(st.get("io"))
	check("io", err)
	c.maxFrameBytes, err = intBytes(st.get("max-frame-bytes"))
	check("max-frame-bytes", err)
	c.handshakeTimeout, err = units.ParseDuration(st.get("handshake-timeout"))
	check("handshake-timeout", err)
	c.idleTimeout, err = units.ParseDuration(st.get("idle-timeout"))
	check("idle-timeout", err)
	c.netLimits, err = parseNetLimits(st)
	if err != nil {
		errs = append(errs, err)
	}
	c.eventLoops, err = strconv.Atoi(st.get("event-loops"))
	if err == nil && c.eventLoops < 0 {
		err = errors.New("must be 0 (automatic) or more")
	}
	check("event-loops", err)
	c.groupCommit, err = parseOnOff(st.get("group-commit"))
	check("group-commit", err)
	c.security, err = parseSecurity(st)
	if err != nil {
		errs = append(errs, err)
	}
	c.logger, err = newLogger(os.Stderr, st.get("log-format"), st.get("log-level"))
	c.logger = throttled(c.logger)
	check("log", err)
	return c, errors.Join(errs...)
}

// parseOnOff reads on/off (and true/false, 1/0).
func parseOnOff(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "on", "true", "1", "yes":
		return true, nil
	case "off", "false", "0", "no", "":
		return false, nil
	}
	return false, fmt.Errorf("%q is not on or off", s)
}

func orZero(s string) string {
	if s == "0" || s == "" {
		return "0s"
	}
	return s
}

// served is a broker felix serve started, with what SIGHUP reloads (the
// trusted keys, the TLS certificate) and the in-memory store of a cluster
// of one without a data directory.
type served struct {
	*broker.Broker
	reloads  []reloader
	memStore *store.Memory
}

// Stop stops the broker, then closes the store it ran on if served made
// it.
func (s *served) Stop(ctx context.Context) error {
	err := s.Broker.Stop(ctx)
	if s.memStore != nil {
		s.memStore.Close()
	}
	return err
}

// runBroker starts a broker, prints where it listens, serves until ctx is
// done, then stops gracefully: no new connections, subscriptions ended,
// in-flight acknowledgements answered, logs synced and closed.
func runBroker(ctx context.Context, cfg serveConfig, out *os.File) error {
	b, err := startBroker(cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "felix %s listening on %s (io: %s, data: %s, fsync: %s)\n",
		version, b.Addr(), b.IOPath(), describeData(cfg.dataDir), cfg.fsync)
	if a := b.TLSAddr(); a != nil {
		fmt.Fprintf(out, "TLS on %s\n", a)
	}
	if a := b.AdminAddr(); a != "" {
		paths := "/metrics, /healthz, /readyz"
		if b.View() != nil {
			paths += ", /cluster"
		}
		fmt.Fprintf(out, "admin on http://%s (%s)\n", a, paths)
	}
	if a := b.PeerAddr(); a != nil {
		fmt.Fprintf(out, "cluster: broker %s, peers on %s, store: %s\n", cfg.brokerID, a, cfg.cluster.describe(cfg.dataDir))
	}
	watchReloads(ctx, b.reloads)
	<-ctx.Done()
	cfg.logger.Info("broker stopping")
	stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	began := time.Now()
	if err := b.Stop(stopCtx); err != nil {
		cfg.logger.Error("broker stopped with an error", "took", time.Since(began), "err", err)
		return err
	}
	cfg.logger.Info("broker stopped", "took", time.Since(began))
	return nil
}

// startBroker starts the broker cfg describes.
func startBroker(cfg serveConfig) (*served, error) {
	if err := checkDataDir(cfg.dataDir); err != nil { // serve_datadir.go
		return nil, err
	}
	b := &served{}
	bc := brokerConfig(cfg, func(nc *netio.Config, e *engine.Engine) error {
		reloads, err := cfg.security.configure(nc, e, cfg.logger)
		b.reloads = reloads
		return err
	})
	if cfg.cluster.needsMemoryStore(cfg.dataDir) {
		b.memStore = store.NewMemory(store.MemoryConfig{})
		bc.Cluster.Store = b.memStore
	}
	var err error
	if b.Broker, err = broker.Start(bc); err != nil {
		if b.memStore != nil {
			b.memStore.Close()
		}
		return nil, err
	}
	return b, nil
}

// brokerConfig is the broker.Config of cfg; secure configures what needs
// the open engine (auth, quotas, TLS).
func brokerConfig(cfg serveConfig, secure func(*netio.Config, *engine.Engine) error) broker.Config {
	bc := broker.Config{
		DataDir: cfg.dataDir, IO: cfg.ioMode, AdminAddr: cfg.adminAddr, Version: version, Logger: cfg.logger,
		GroupCommit: cfg.groupCommit,
		Engine:      engine.Options{Fsync: cfg.fsync, Retention: cfg.retention, SegmentBytes: cfg.segmentBytes, PrepareSegments: true},
		Groups:      group.Options{DeadLetterMaxAge: cfg.deadLetterMaxAge},
		Net: netio.Config{
			Addr: cfg.addr, BrokerID: cfg.brokerID, Limits: wire.Limits{FrameBytesMax: cfg.maxFrameBytes},
			HandshakeTimeout: cfg.handshakeTimeout, IdleTimeout: cfg.idleTimeout, Multicore: true,
			EventLoops: cfg.eventLoops,
		},
		Secure:  secure,
		Cluster: clusterConfig(cfg),
	}
	if cfg.cluster.advertiseAddr != "" {
		bc.Net.AdvertiseAddr = cfg.cluster.advertiseAddr
	}
	cfg.netLimits.configure(&bc.Net)
	return bc
}

func describeData(dir string) string {
	if dir == "" {
		return "memory only"
	}
	return dir
}
