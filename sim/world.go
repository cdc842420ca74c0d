package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/felixbroker/felix/check"
	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/replica"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/cache"
)

// stepDuration is the simulator's tick: it delivers what is due, runs the
// workload and the faults, then lets fake time pass by this much. It is a
// millisecond and a few microseconds, so that a broker's timer of a whole
// number of milliseconds, set at a step, does not fire at a later step,
// where it would race the simulator's own calls into the brokers (synctest
// wakes every goroutine due at one instant together, in no fixed order).
// Everything the simulator does happens at a multiple of it from the run's
// start (the network's creation): a broker's timers are set at those
// instants or at instants of its own tickers, and a ticker of period p
// started at step k meets a step again only after 1007 of its periods.
const stepDuration = time.Millisecond + 7*time.Microsecond

// World is one run: the brokers, the control plane, the network, the
// workload and the faults, and what was recorded. Its fields are the
// simulator's goroutine's, but for what the comments say.
type World struct {
	cfg      Config
	began    time.Time
	net      *network
	cp       *control
	brokers  []*broker
	trace    *trace
	inbox    inbox
	appended appendedQueue // the caches' parts to ship (cache_broker.go)
	gate     *syncGate
	rec      []*check.Recorder   // by shard: each shard is judged by its contract
	cacheRec []*check.Recorder   // by cache, judged as the streams' shards are
	catalog  *cache.FileCatalog  // the caches' catalog, every broker's
	streams  *engine.FileCatalog // the stream's catalog, every broker's engine's (an engine run)
	rng      *rand.Rand
	roles    []roleChange // assignments the brokers are yet to learn, oldest first
	load     *workload
	caches   *cacheWorkload
	faults   *faultPlan
	stats    Stats
}

// Stats count what a run did.
type Stats struct {
	Delivered, Dropped int
	Syncs              int            // fsyncs let go
	Faults             map[string]int // injected, by kind
	Publishes, Acked   int
	Reads              int
	// An engine run's: the subscriptions its subscribers made, and the
	// records they were delivered.
	Subscriptions, SubRecords int
	CacheOps, CacheOk         int // cache and counter operations, and those answered
	FinalUnavailable          int // shards that had no serving leader at the end
	// Replacements: leaders named at a generation where a broker back on
	// a new disk took its old replica's place.
	Replacements int
}

func newWorld(cfg Config) (*World, error) {
	w := &World{cfg: cfg, began: time.Now(), rng: rand.New(rand.NewPCG(cfg.Seed, 0x776f726c64)), stats: Stats{Faults: map[string]int{}}}
	w.trace = newTrace(w.began)
	w.gate = newSyncGate()
	w.net = newNetwork(w, cfg.Seed)
	for i := range cfg.Shards {
		_ = i
		w.rec = append(w.rec, &check.Recorder{})
	}
	if err := w.openCatalog(); err != nil {
		return nil, err
	}
	if err := w.openStreamCatalog(); err != nil {
		return nil, err
	}
	for k := range cfg.Brokers {
		id := string(rune('a' + k))
		w.brokers = append(w.brokers, &broker{id: id, disk: "disk-" + id, fs: newDisk(), boot: "boot-" + id})
	}
	cp, err := newControl(w)
	if err != nil {
		return nil, err
	}
	w.cp = cp
	for _, b := range w.brokers {
		// Each broker starts at a step of its own, so that no two
		// brokers' tickers (heartbeats, fsyncs) fire at one instant, where
		// the order their goroutines run in, and send in, would be the
		// scheduler's.
		time.Sleep(stepDuration)
		if err := w.startBroker(b); err != nil {
			return nil, err
		}
	}
	for i, id := range w.shardIDs() {
		cp.place(id, i%len(w.brokers))
	}
	w.load = newWorkload(w)
	w.caches = newCacheWorkload(w)
	w.faults = newFaultPlan(w)
	return w, nil
}

// shardIDs are every shard the control plane places: the stream's, then
// one per cache.
func (w *World) shardIDs() []cluster.ShardID {
	var out []cluster.ShardID
	for i := range w.cfg.Shards {
		out = append(out, shardID(i))
	}
	for k := range w.cfg.Caches {
		out = append(out, cacheShardID(k))
	}
	return out
}

// spec is shard id's settings: its stream shard's, or its cache's.
func (w *World) spec(id cluster.ShardID) ShardConfig {
	if id.Object.Kind == cluster.KindCache {
		for k, c := range w.cfg.Caches {
			if cacheShardID(k) == id {
				return ShardConfig(c)
			}
		}
	}
	return w.cfg.Shards[id.Shard]
}

// openCatalog writes every cache's entry in the catalog the brokers'
// stores share, as the cluster's catalog holds one cache for all.
func (w *World) openCatalog() error {
	c, err := cache.OpenFileCatalog(nil, "")
	if err != nil {
		return err
	}
	w.catalog = c
	for k, cc := range w.cfg.Caches {
		info := cacheInfo(k, cc, w.began)
		if w.cfg.Bug == BugCacheLeaderAcks {
			info.Config.Consistency = engine.ConsistencyLeader
		}
		if err := c.Create(info); err != nil {
			return err
		}
		w.cacheRec = append(w.cacheRec, &check.Recorder{})
	}
	return nil
}

// openStreamCatalog writes the stream's entry in the catalog the brokers'
// engines share, in an engine run (the catalog is empty otherwise).
func (w *World) openStreamCatalog() error {
	c, err := engine.OpenFileCatalog(nil, "")
	if err != nil {
		return err
	}
	w.streams = c
	if !w.cfg.Engine {
		return nil
	}
	return c.Create(streamInfo(w.cfg, w.began))
}

// now is the fake time since the run began.
func (w *World) now() time.Duration { return time.Since(w.began) }

func (w *World) nowNs() int64 { return int64(w.now()) }

func (w *World) broker(id string) *broker {
	for _, b := range w.brokers {
		if b.id == id {
			return b
		}
	}
	return nil
}

// apply queues a written assignment for the brokers, which learn it as
// from the store's watch: one shard's change a step (nextRole), so that no
// two leaderships begin at one instant, where their tickers would fire
// together ever after and their goroutines run in the scheduler's order.
func (w *World) apply(s cluster.StoredAssignment) { w.queueRole(s.Shard, "") }

// queueRole queues shard's current assignment for broker id ("": every
// broker).
func (w *World) queueRole(shard cluster.ShardID, id string) {
	r := roleChange{shard: shard, broker: id}
	if !slices.Contains(w.roles, r) {
		w.roles = append(w.roles, r)
	}
}

// roleChange is a shard's assignment a broker (or every one) is to learn.
type roleChange struct {
	shard  cluster.ShardID
	broker string
}

// nextRole tells the oldest queued change, at the store's current
// assignment.
func (w *World) nextRole() {
	if len(w.roles) == 0 {
		return
	}
	r := w.roles[0]
	w.roles = w.roles[1:]
	s := w.cp.table[r.shard]
	for _, b := range w.brokers {
		if r.broker == "" || r.broker == b.id {
			w.applyTo(b, s)
		}
	}
}

func (w *World) applyTo(b *broker, s cluster.StoredAssignment) {
	if !b.up() {
		return
	}
	if s.Shard.Object.Kind == cluster.KindCache || w.cfg.Engine {
		w.adapterRole(b, s)
		return
	}
	a := s.Assignment
	var followers []string
	in := false
	for _, r := range a.Replicas {
		if r == (cluster.Replica{Broker: b.id, DiskID: b.disk}) {
			in = true
		} else {
			followers = append(followers, r.Broker)
		}
	}
	switch {
	case !in:
	case a.Leader != (cluster.Replica{Broker: b.id, DiskID: b.disk}):
		b.node.Follow(s.Shard, a.Generation)
	default:
		spec := w.cfg.Shards[s.Shard.Shard]
		if _, err := b.node.Lead(s.Shard, a.Generation, replica.LeadOptions{Followers: followers, Joined: joinedOf(a),
			Consistency: spec.Consistency, Timeout: w.cfg.Lease}); err != nil {
			w.trace.add("%s lead shard %d at %d: %v", b.id, s.Shard.Shard, a.Generation, err)
		}
	}
}

// joinedOf is the generation each replica of a that joined after
// placement joined at, by broker id (replica.LeadOptions.Joined).
func joinedOf(a cluster.Assignment) map[string]uint64 {
	var out map[string]uint64
	for _, j := range a.Joins {
		if out == nil {
			out = map[string]uint64{}
		}
		out[j.Replica.Broker] = j.Generation
	}
	return out
}

// leaderOf is the broker the store names shard i's leader (nil: none).
func (w *World) leaderOf(i int) *broker {
	return w.broker(w.cp.table[shardID(i)].Assignment.Leader.Broker)
}

// run drives the world for its duration and a quiet time after, with every
// fault lifted, then reads each shard's final log.
func (w *World) run() {
	quiet := 5 * w.cfg.Lease
	tickEvery := w.cfg.Lease / 8
	for {
		w.net.settle()
		now := w.now()
		w.faults.poll(now)
		if now >= w.cfg.Duration+quiet {
			break
		}
		if now < w.cfg.Duration {
			w.load.step(now)
			w.caches.step()
		}
		if now >= w.cfg.Duration+quiet/2 {
			w.caches.finalReads()
		}
		if now%tickEvery < stepDuration {
			w.cp.tick()
		}
		w.nextRole()
		time.Sleep(stepDuration)
	}
	w.finish()
}

// finish records each shard's final read and its replicas' logs.
func (w *World) finish() {
	for i := range w.cfg.Shards {
		b := w.leaderOf(i)
		var ld *replica.Leader
		if b != nil && b.up() {
			ld = b.node.Leader(shardID(i))
		}
		if ld == nil || !ld.Serving(time.Now()) {
			w.stats.FinalUnavailable++
			w.trace.add("final shard %d: no serving leader", i)
		} else if w.cfg.Engine {
			if !w.load.engineRead(b, i, len(w.brokers)+clients+subscribers, true) {
				w.stats.FinalUnavailable++ // its leader serves, its engine not yet: no final read
			}
		} else {
			w.load.read(ld, i, b.id, len(w.brokers), true)
		}
		w.recordLogs(i, ld)
	}
	for _, b := range w.brokers {
		w.stop(b)
	}
	w.cp.tr.Close()
	w.net.net.Close()
}

func (w *World) String() string { return fmt.Sprintf("world %v", w.cfg) }
