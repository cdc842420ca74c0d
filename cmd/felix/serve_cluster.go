package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/felixbroker/felix/broker"
	"github.com/felixbroker/felix/cluster/store"
	"github.com/felixbroker/felix/units"
)

// brokerIDAlone is the broker id of a cluster of one when --broker-id says
// nothing: fixed, so a broker whose host is renamed (a container made
// again over the same volume) comes back as the broker its shards are
// placed on. Brokers of several must be named.
const brokerIDAlone = "felix-1"

// clusterSettings are the cluster's flags, parsed. The zero value is a
// cluster of one on an embedded etcd in the data directory (in memory
// without one), its peer listener on any free loopback port.
type clusterSettings struct {
	rack     string
	peerAddr string // "" is broker.PeerAddrDefault
	// advertiseAddr and advertisePeerAddr are registered in place of the
	// bound addresses; "" is those.
	advertiseAddr, advertisePeerAddr string
	// members is --cluster as etcd's initial cluster, name=http://host:port,
	// ...; "" is a member of its own.
	members        string
	etcdClientAddr string // "" is 127.0.0.1:0
	endpoints      []string
	prefix         string
	// shardLease and publishTimeout are ClusterConfig's; 0 is the
	// broker's default.
	shardLease, publishTimeout time.Duration
}

// parseCluster reads the cluster's settings. brokerID is --broker-id as
// given ("" when not), addr --addr; it returns the broker id to run as.
func parseCluster(st *settings, brokerID, addr string) (clusterSettings, string, error) {
	c := clusterSettings{
		rack: st.get("rack"), advertiseAddr: st.get("advertise-addr"), advertisePeerAddr: st.get("advertise-peer-addr"),
		etcdClientAddr: st.get("etcd-client-addr"), prefix: st.get("etcd-prefix"),
	}
	var errs []error
	var err error
	if c.peerAddr, err = peerAddrFor(st.get("peer-addr"), addr); err != nil {
		errs = append(errs, named("peer-addr", err))
	}
	for e := range strings.SplitSeq(st.get("etcd-endpoints"), ",") {
		if e = strings.TrimSpace(e); e != "" {
			c.endpoints = append(c.endpoints, e)
		}
	}
	c.shardLease, err = clusterDuration(st.get("shard-lease"), broker.ShardLeaseDefault)
	errs = append(errs, named("shard-lease", err))
	c.publishTimeout, err = clusterDuration(st.get("publish-timeout"), broker.PublishTimeoutDefault)
	errs = append(errs, named("publish-timeout", err))
	members := st.get("cluster")
	switch {
	case members != "" && len(c.endpoints) > 0:
		errs = append(errs, errors.New("--cluster and --etcd-endpoints: one or the other (embedded members, or an external etcd)"))
	case members != "":
		c.members, err = initialCluster(members, brokerID)
		errs = append(errs, named("cluster", err))
		if st.get("data") == "" {
			errs = append(errs, errors.New("--cluster: an embedded etcd member needs a data directory (--data)"))
		}
	case len(c.endpoints) > 0 && brokerID == "":
		errs = append(errs, errors.New("--etcd-endpoints: name this broker (--broker-id), unique in the cluster"))
	case brokerID == "":
		brokerID = brokerIDAlone
	}
	return c, brokerID, errors.Join(errs...)
}

// clusterDuration is a duration setting of the cluster: 0 (or empty) is
// the broker's default, def, named in the refusal of a negative one.
func clusterDuration(v string, def time.Duration) (time.Duration, error) {
	d, err := units.ParseDuration(orZero(v))
	if err != nil {
		return 0, err
	}
	if d < 0 {
		return 0, fmt.Errorf("%s is negative: must be 0 (the default, %v) or more", v, def)
	}
	return d, nil
}

// peerAddrFor is --peer-addr, or by default --addr's host (loopback for a
// wildcard one: brokers do not authenticate each other yet, so the peer
// listener is not opened to every interface unless asked) with --addr's
// port plus 2 (7117 gives 7119, beside the admin server's 7118; port 0
// stays 0, any free one).
func peerAddrFor(peerAddr, addr string) (string, error) {
	if peerAddr != "" {
		_, _, err := net.SplitHostPort(peerAddr)
		return peerAddr, err
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("from --addr %q: %w", addr, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return "", fmt.Errorf("from --addr %q: %w", addr, err)
	}
	if p != 0 {
		p += 2
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, strconv.Itoa(p)), nil
}

// initialCluster turns --cluster's name=host:port,... into etcd's initial
// cluster, name=http://host:port,..., checking that every name is there
// once, every address is host:port, and self is among the names.
func initialCluster(members, self string) (string, error) {
	var out []string
	seen := map[string]bool{}
	for m := range strings.SplitSeq(members, ",") {
		name, addr, ok := strings.Cut(strings.TrimSpace(m), "=")
		if !ok || name == "" || seen[name] {
			return "", fmt.Errorf("%q: want name=host:port, each name once", m)
		}
		seen[name] = true
		addr = strings.TrimPrefix(addr, "http://")
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return "", fmt.Errorf("%q: %w", m, err)
		}
		out = append(out, name+"=http://"+addr)
	}
	if !seen[self] {
		return "", fmt.Errorf("this broker (--broker-id %q) is not one of its members", self)
	}
	return strings.Join(out, ","), nil
}

// clusterConfig is the broker.ClusterConfig of cfg. Without a data
// directory or an external etcd the store is in memory, made by
// startBroker (needsMemoryStore).
func clusterConfig(cfg serveConfig) *broker.ClusterConfig {
	c := cfg.cluster
	cc := &broker.ClusterConfig{
		BrokerID: cfg.brokerID, Rack: c.rack, PeerAddr: c.peerAddr,
		AdvertiseAddr: c.advertiseAddr, AdvertisePeerAddr: c.advertisePeerAddr,
		ShardLease: c.shardLease, PublishTimeout: c.publishTimeout,
		// For tests only (the nemeses), so neither a flag nor a setting.
		AckJournal: os.Getenv(broker.AckJournalEnv),
	}
	switch {
	case len(c.endpoints) > 0:
		cc.Endpoints, cc.Prefix = c.endpoints, c.prefix
	case cfg.dataDir != "":
		cc.Embedded = embedConfig(cfg)
	}
	return cc
}

// embedConfig is the etcd member of a broker's data directory: a member
// of its own, named "felix", or cfg's member of --cluster, named after
// the broker. etcd logs warnings and errors through the broker's logger.
func embedConfig(cfg serveConfig) *store.EmbedConfig {
	e := &store.EmbedConfig{
		Name: "felix", Dir: filepath.Join(cfg.dataDir, "etcd"), ClientURL: "http://" + orDefault(cfg.cluster.etcdClientAddr, "127.0.0.1:0"),
		Logger: cfg.logger, LogLevel: slog.LevelWarn,
	}
	if cfg.cluster.members != "" {
		e.Name, e.InitialCluster = cfg.brokerID, cfg.cluster.members
	}
	return e
}

// needsMemoryStore reports whether cfg's cluster runs on a store in
// memory: a cluster of one without a data directory.
func (c clusterSettings) needsMemoryStore(dataDir string) bool {
	return len(c.endpoints) == 0 && dataDir == ""
}

// describe says where the cluster's state lives, for the start line.
func (c clusterSettings) describe(dataDir string) string {
	switch {
	case len(c.endpoints) > 0:
		return "etcd at " + strings.Join(c.endpoints, ",")
	case dataDir == "":
		return "in memory (a cluster of one)"
	case c.members != "":
		return "embedded etcd member of " + c.members
	}
	return "embedded etcd (a cluster of one)"
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
