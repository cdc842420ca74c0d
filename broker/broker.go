package broker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"

	"github.com/felixbroker/felix/datadir"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/cache"
	"github.com/felixbroker/felix/engine/group"
	"github.com/felixbroker/felix/engine/producer"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/netio"
	"github.com/felixbroker/felix/ring"
	"github.com/felixbroker/felix/segment/vfs"
)

// Broker is a running broker: the pieces Start opened, in its order.
type Broker struct {
	cfg       Config
	lock      *datadir.Lock // held from before recovery until every file is closed
	diskID    string
	driver    ring.Driver              // nil when Config.FS supplied the file system
	fs        vfs.FS                   // nil without a data directory
	flushes   *shardlog.FlushScheduler // shared by every OnCommit log; nil without GroupCommit or a data directory
	admin     *adminServer
	metrics   *metrics
	engine    *engine.Engine
	caches    *cache.Store
	groups    *group.Manager
	producers *producer.Manager
	server    *netio.Server
	node      *node // nil without Config.Cluster
	stopOnce  sync.Once
	stopErr   error // the first Stop's
}

// Start opens a broker from cfg in the package doc's order and returns it
// serving. On error everything it opened is closed again.
func Start(cfg Config) (*Broker, error) {
	b := &Broker{cfg: cfg, metrics: newMetrics()}
	steps := []func() error{b.openData, b.openAdmin, b.openCluster, b.openEngine, b.openManagers, b.openServer, b.joinCluster}
	for _, step := range steps {
		if err := step(); err != nil {
			b.close(context.Background())
			return nil, err
		}
	}
	if b.admin != nil {
		b.admin.register(b)
		b.admin.setReady(b.notReady())
	}
	b.cfg.logger().Info("broker ready", "addr", b.server.Addr().String(), "io", b.ioPath(),
		"data", b.describeData(), "disk_id", b.diskID)
	return b, nil
}

// openData takes the data directory's lock and disk id and opens its file
// system: the OS one through the IO driver, or the one Config.FS gives.
func (b *Broker) openData() error {
	if !b.cfg.durable() {
		return nil
	}
	if b.cfg.GroupCommit {
		b.flushes = shardlog.NewFlushScheduler()
	}
	if b.cfg.FS != nil {
		b.fs = b.cfg.FS
		return nil
	}
	var err error
	if b.lock, err = datadir.Acquire(b.cfg.DataDir); err != nil {
		return err
	}
	if b.diskID, err = datadir.DiskID(b.cfg.DataDir); err != nil {
		return err
	}
	if b.driver, err = ring.Open(ring.Config{Mode: b.cfg.IO, Logger: b.cfg.logger()}); err != nil {
		return err
	}
	b.fs = vfs.NewOS(b.driver)
	return nil
}

func (b *Broker) openAdmin() error {
	if b.cfg.AdminAddr == "" {
		return nil
	}
	var err error
	b.admin, err = startAdmin(b.cfg.AdminAddr, b.cfg.logger())
	return err
}

func (b *Broker) openEngine() error {
	o := b.cfg.Engine
	o.FS, o.Dir, o.Logger, o.Observer = b.fs, b.cfg.DataDir, b.cfg.logger(), b.metrics.log
	if o.FlushScheduler == nil {
		o.FlushScheduler = b.flushes
	}
	if b.cfg.Owner != nil {
		o.Owner = b.cfg.Owner
	}
	b.node.engineOptions(&o)
	var err error
	b.engine, err = engine.Open(o)
	return err
}

// openManagers opens the caches, groups and producers over the engine.
func (b *Broker) openManagers() error {
	co := b.cfg.Cache
	co.FS, co.Dir, co.Logger, co.Owner = b.fs, b.cfg.DataDir, b.cfg.logger(), b.engine.Owner()
	if co.FlushScheduler == nil {
		co.FlushScheduler = b.flushes
	}
	b.cfg.cacheDefaults(&co)
	b.node.cacheOptions(&co)
	var err error
	if b.caches, err = cache.Open(co); err != nil {
		return err
	}
	gopts := b.cfg.Groups
	gopts.Logger = b.cfg.logger()
	b.node.groupOptions(&gopts)
	b.groups = group.New(b.engine, gopts)
	b.node.holdGroups(b.groups.HoldReplicas)
	po := b.cfg.Producers
	if po.Epoch, err = nextEpoch(b.epochDir()); err != nil {
		return fmt.Errorf("felix/broker: producer epoch: %w", err)
	}
	b.producers = producer.New(b.engine, po)
	return nil
}

// epochDir is where the producer epoch file lives: the data directory on
// the OS file system, none (a random epoch) otherwise.
func (b *Broker) epochDir() string {
	if b.cfg.onOS() {
		return b.cfg.DataDir
	}
	return ""
}

func (b *Broker) openServer() error {
	nc := b.cfg.Net
	nc.Engine, nc.Caches, nc.Groups, nc.Producers = b.engine, b.caches, b.groups, b.producers
	nc.Metrics, nc.Logger, nc.Owner = b.metrics.net, b.cfg.logger(), b.engine.Owner()
	b.node.serverConfig(&nc)
	if b.cfg.Secure != nil {
		if err := b.cfg.Secure(&nc, b.engine); err != nil {
			return err
		}
	}
	srv, err := netio.NewServer(nc)
	if err != nil {
		return err
	}
	b.node.servePeers(srv)
	if err := srv.Start(); err != nil {
		return err
	}
	b.server = srv
	return nil
}

// Stop stops the broker gracefully: no new connections, subscriptions
// ended, in-flight acknowledgements answered within ctx, logs synced and
// closed, the data directory's lock released last. A second Stop waits for
// the first and returns its result.
func (b *Broker) Stop(ctx context.Context) error {
	b.stopOnce.Do(func() { b.stopErr = b.close(ctx) })
	return b.stopErr
}

// close shuts the pieces down in the reverse of Start's order; the
// cluster's reconcile loop goes first, so no shard opens or closes while
// the rest does.
func (b *Broker) close(ctx context.Context) error {
	if b.admin != nil {
		b.admin.setStopping()
	}
	b.node.stopLoop()
	var errs []error
	if b.server != nil {
		errs = append(errs, b.server.Stop(ctx))
	}
	errs = append(errs, b.node.leave(ctx))
	if b.groups != nil {
		errs = append(errs, b.groups.Close())
	}
	if b.caches != nil {
		errs = append(errs, b.caches.Close())
	}
	if b.engine != nil {
		errs = append(errs, b.engine.Close())
	}
	errs = append(errs, b.node.close())
	if b.flushes != nil { // after every log on it is closed
		b.flushes.Close()
	}
	if b.admin != nil {
		errs = append(errs, b.admin.close(ctx))
	}
	if b.driver != nil {
		errs = append(errs, b.driver.Close())
	}
	errs = append(errs, b.lock.Release())
	return errors.Join(errs...)
}

// Addr is the client listener's address.
func (b *Broker) Addr() net.Addr { return b.server.Addr() }

// TLSAddr is the TLS listener's address, nil without one.
func (b *Broker) TLSAddr() net.Addr { return b.server.TLSAddr() }

// AdminAddr is the admin server's address, "" without one.
func (b *Broker) AdminAddr() string {
	if b.admin == nil {
		return ""
	}
	return b.admin.addr()
}

// DiskID is the data directory's disk id, "" without one; in a cluster
// on a memory file system or without a data directory, the one drawn for
// this broker's life (what it registered).
func (b *Broker) DiskID() string { return b.diskID }

// Engine, Caches, Groups, Producers and Server are the broker's pieces.
func (b *Broker) Engine() *engine.Engine       { return b.engine }
func (b *Broker) Caches() *cache.Store         { return b.caches }
func (b *Broker) Groups() *group.Manager       { return b.groups }
func (b *Broker) Producers() *producer.Manager { return b.producers }
func (b *Broker) Server() *netio.Server        { return b.server }

// IOPath names the IO driver ("uring", "portable"), or the file system
// Config.FS gave ("custom"), or "memory" without a data directory.
func (b *Broker) IOPath() string { return b.ioPath() }

func (b *Broker) ioPath() string {
	switch {
	case b.driver != nil:
		return string(b.driver.Kind())
	case b.fs != nil:
		return "custom"
	}
	return "memory"
}

func (b *Broker) describeData() string {
	if !b.cfg.durable() {
		return "memory only"
	}
	return b.cfg.DataDir
}
