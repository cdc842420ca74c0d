package broker

import (
	"log/slog"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/cache"
	"github.com/felixbroker/felix/engine/group"
	"github.com/felixbroker/felix/engine/producer"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/netio"
	"github.com/felixbroker/felix/ring"
	"github.com/felixbroker/felix/segment/vfs"
)

// Config is everything one broker is made of. The subsystems' own options
// are embedded whole; Start fills in the fields that tie them together
// (file system, directories, logger, observers, the managers the server
// serves), so a caller sets only what it wants to differ.
type Config struct {
	// DataDir is the data directory; empty keeps everything in memory
	// (durable streams and caches are then refused).
	DataDir string
	// FS, when set, is the file system DataDir is a path in (a vfs.MemFS in
	// tests: no lock and no disk id are taken, no IO driver is opened).
	// Nil: the OS file system through the IO driver.
	FS vfs.FS
	// IO chooses the IO driver of the OS file system.
	IO ring.Mode
	// AdminAddr is the HTTP address of /metrics, /healthz and /readyz;
	// empty serves none.
	AdminAddr string
	// Version is reported in felix_build_info.
	Version string
	// Logger receives every component's logs; nil discards them.
	Logger *slog.Logger
	// Owner says which shards this broker leads, for every part that asks
	// (the engine's publishes, the caches' writes, the groups' polls, the
	// producers' sequences, the server's subscribe redirects): set here
	// once, it overrides the subsystems' own Owner fields. Nil: the
	// broker leads everything (engine.Alone). With Cluster set it must be
	// nil: the cluster's View is then the one ownership source.
	Owner engine.Ownership

	// Cluster, when set, makes the broker one of a cluster (ClusterConfig:
	// the control plane's store, placement, forwarding). Nil: the broker
	// runs alone, its catalogs in its data directory.
	Cluster *ClusterConfig

	// GroupCommit turns on group commit across shards: the broker runs
	// one shardlog.FlushScheduler that every OnCommit log of its streams
	// and caches shares (their syncs go to the disk together, each round
	// gathering the answered callers' next writes), unless Engine or
	// Cache name a FlushScheduler of their own. Off (the default): each
	// log's committer flushes alone. docs/benchmarks.md, "Group commit
	// across shards", has what it changes.
	GroupCommit bool

	Engine    engine.Options   // FS, Dir, Logger, Observer are set by Start
	Cache     cache.Options    // FS, Dir, Logger are set by Start; Fsync and SegmentBytes default to the engine's
	Groups    group.Options    // Logger is set by Start
	Producers producer.Options // Epoch is set by Start
	Net       netio.Config     // Engine, Caches, Groups, Producers, Metrics, Logger are set by Start

	// Secure, when set, configures what needs the open engine (the
	// authenticator, quotas, the TLS listener) on the server's config,
	// after the engine and its managers are open and before the server
	// starts. An error fails Start.
	Secure func(net *netio.Config, e *engine.Engine) error
}

func (c *Config) logger() *slog.Logger {
	if c.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Logger
}

// durable reports whether the broker has a data directory.
func (c *Config) durable() bool { return c.DataDir != "" }

// onOS reports whether the data directory is on the OS file system, where
// the lock, the disk id and the producer epoch file live.
func (c *Config) onOS() bool { return c.durable() && c.FS == nil }

// cacheDefaults gives the cache store what it leaves unset and the broker
// has: the engine's FsyncMode, segment size and segment preparation, and
// the frame limit as the largest value.
func (c *Config) cacheDefaults(co *cache.Options) {
	if co.Fsync == (shardlog.FsyncMode{}) {
		co.Fsync = c.Engine.Fsync
	}
	if co.SegmentBytes == 0 {
		co.SegmentBytes = c.Engine.SegmentBytes
	}
	co.PrepareSegments = co.PrepareSegments || c.Engine.PrepareSegments
	if co.ValueBytesMax == 0 {
		co.ValueBytesMax = c.Net.Limits.FrameBytesMax
	}
}
