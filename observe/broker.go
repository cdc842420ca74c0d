package observe

import (
	"runtime"
	"strconv"
	"time"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/cache"
	"github.com/felixbroker/felix/engine/group"
	"github.com/felixbroker/felix/netio"
	"github.com/felixbroker/felix/netio/wire"
)

// Broker is what RegisterBroker reads. Engine and Net are required; the
// optional components are skipped when nil (their families still exist,
// with no series, or zero).
type Broker struct {
	Version string
	IOPath  string // the ring driver's kind: io_uring or portable
	Engine  *engine.Engine
	Net     *netio.Metrics // from NewNetMetrics, so ack latency is measured
	Caches  *cache.Store
	Groups  *group.Manager
}

// NewNetMetrics registers the publish-ack histogram and returns the
// counters to hand to netio.Config.Metrics, with ObserveAck feeding it.
func NewNetMetrics(r *Registry) *netio.Metrics {
	h := r.Histogram("felix_publish_ack_duration_seconds",
		"Time from decoding a publish request to queueing its acknowledgement, at the stream's durability.", ackSecondsBuckets)
	m := new(netio.Metrics)
	m.ObserveAck = func(d time.Duration) { h.Update(d.Seconds()) }
	return m
}

// RegisterBroker registers every scrape-time family of a running broker.
// Call it once, after the log observer and NewNetMetrics.
func RegisterBroker(r *Registry, b Broker) {
	registerInfo(r, b)
	registerStorage(r, b.Engine)
	registerNet(r, b.Net)
	registerCaches(r, b.Caches)
	registerGroups(r, b.Groups)
}

func registerInfo(r *Registry, b Broker) {
	r.GaugeFunc(`felix_build_info{`+Label("version", b.Version)+","+Label("go_version", runtime.Version())+","+Label("io_path", b.IOPath)+`}`,
		"Always 1; the labels say which build runs and which IO path it took.", one)
	r.GaugeFunc(`felix_io_path{`+Label("path", b.IOPath)+`}`,
		"Always 1; path is io_uring, or portable when the kernel refused io_uring or it was forced.", one)
	r.GaugeFunc("felix_streams", "Streams in the catalog.", func() float64 { return float64(len(b.Engine.Streams("", ""))) })
}

func one() float64 { return 1 }

// shardSums adds up what the engine's shards report at one scrape.
type shardSums struct {
	shards, durable, segments, subscribers int
	bytes, unsynced, torn                  int64
	recovery                               time.Duration
	// the background verification of sealed segments, and its findings
	verifyPending, verified, verifyErrors int64
	offline                               int
}

func sumShards(e *engine.Engine) shardSums {
	var s shardSums
	for _, st := range e.Stats() {
		s.shards++
		s.subscribers += st.Subscribers
		if !st.Durable {
			continue
		}
		s.durable++
		s.segments += st.Log.Segments
		s.bytes += st.Log.Bytes
		s.unsynced += st.Log.UnsyncedBytes
		s.torn += st.Recovery.TornBytes
		s.recovery += st.Recovery.Took
		s.verifyPending += st.Log.VerifyPendingSegments
		s.verified += st.Log.VerifiedBytes
		s.verifyErrors += st.Log.VerifyFailures
		if st.Log.Offline {
			s.offline++
		}
	}
	return s
}

func registerStorage(r *Registry, e *engine.Engine) {
	g := func(name, help string, f func(shardSums) float64) {
		r.GaugeFunc(name, help, func() float64 { return f(sumShards(e)) })
	}
	g("felix_shards", "Open shards of every stream.", func(s shardSums) float64 { return float64(s.shards) })
	g("felix_log_segments", "Segment files of every durable shard log.", func(s shardSums) float64 { return float64(s.segments) })
	g("felix_log_size_bytes", "Bytes held in the segments of every durable shard log.", func(s shardSums) float64 { return float64(s.bytes) })
	g("felix_log_unsynced_bytes",
		"Bytes written to active segments since their last fdatasync: what losing the machine now would lose (Periodic, None).",
		func(s shardSums) float64 { return float64(s.unsynced) })
	g("felix_log_recovery_duration_seconds", "Time the open shard logs spent recovering when they were opened.",
		func(s shardSums) float64 { return s.recovery.Seconds() })
	g("felix_log_recovery_truncated_bytes",
		"Bytes of unfinished writes recovery cut from the tails of the open shard logs (never acknowledged records).",
		func(s shardSums) float64 { return float64(s.torn) })
	registerVerification(g)
}

// registerVerification adds the background verification's gauges: what
// the open shard logs have verified of their sealed segments since they
// opened, and the shards it (or a read) found damaged.
func registerVerification(g func(string, string, func(shardSums) float64)) {
	g("felix_log_verify_pending_segments",
		"Sealed segments the open shard logs have yet to verify in the background since they opened.",
		func(s shardSums) float64 { return float64(s.verifyPending) })
	g("felix_log_verified_bytes", "Bytes of sealed segments the open shard logs verified in the background since they opened.",
		func(s shardSums) float64 { return float64(s.verified) })
	g("felix_log_verify_errors", "Background verifications of sealed segments an IO error cut short (not damage: reads there fail the same way).",
		func(s shardSums) float64 { return float64(s.verifyErrors) })
	g("felix_log_offline_shards",
		"Durable shards offline because a record on disk is damaged: their reads and publishes fail with storage_corrupt.",
		func(s shardSums) float64 { return float64(s.offline) })
}

func registerNet(r *Registry, m *netio.Metrics) {
	u := func(v uint64) float64 { return float64(v) }
	r.GaugeFunc("felix_connections", "Open client connections.", func() float64 { return float64(m.ConnectionsActive.Load()) })
	r.CounterFunc("felix_connections_opened_total", "Client connections accepted.", func() float64 { return u(m.ConnectionsOpened.Load()) })
	r.CounterFunc("felix_connections_closed_total", "Client connections closed, for any reason.", func() float64 { return u(m.ConnectionsClosed.Load()) })
	r.CounterFunc("felix_handshakes_failed_total", "Connections refused or timed out at HELLO.", func() float64 { return u(m.HandshakesFailed.Load()) })
	r.CounterFunc("felix_auth_refused_total", "Credentials that did not verify: HELLO tokens and forwarded requests' (bad signature, untrusted key, expired, malformed).",
		func() float64 { return u(m.AuthRefused.Load()) })
	r.CounterFunc("felix_idle_timeouts_total", "Connections closed for being idle.", func() float64 { return u(m.IdleTimeouts.Load()) })
	r.CounterFunc("felix_frames_refused_total", "Frames answered with an error and a close: malformed, oversized, unknown.", func() float64 { return u(m.FramesRefused.Load()) })
	r.CounterFunc("felix_unread_answers_closes_total", "Connections closed because they sent requests and never read the answers.",
		func() float64 { return u(m.AnswersUnread.Load()) })
	r.CounterFunc("felix_connections_refused_total", "Connections refused at accept because the broker's maximum were open.",
		func() float64 { return u(m.ConnectionsRefused.Load()) })
	r.CounterFunc("felix_connections_shed_total", "Connections closed because their unfinished frame would have passed the bound on all unfinished frames.",
		func() float64 { return u(m.ConnectionsShed.Load()) })
	r.CounterFunc("felix_frame_timeouts_total", "Connections closed because a frame did not arrive whole within the frame timeout.",
		func() float64 { return u(m.FrameTimeouts.Load()) })
	r.GaugeFunc("felix_cache_reads_parked", "Reads of Quorum caches parked until a write they must see reaches a majority.",
		func() float64 { return float64(m.CacheReadsParked.Load()) })
	r.CounterFunc("felix_cache_reads_park_refused_total", "Reads of Quorum caches refused overloaded because the broker or their connection parked its most.",
		func() float64 { return u(m.CacheReadsParkRefused.Load()) })
	r.GaugeFunc("felix_inbound_buffered_bytes", "Bytes the unfinished frames of client connections hold, all connections.",
		func() float64 { return float64(m.InboundBuffered.Load()) })
	r.CounterFunc("felix_network_received_bytes_total", "Bytes read from client sockets.", func() float64 { return u(m.BytesIn.Load()) })
	r.CounterFunc("felix_network_sent_bytes_total", "Bytes written to client sockets.", func() float64 { return u(m.BytesOut.Load()) })
	r.GaugeFunc("felix_outbound_buffered_bytes", "Answer and event bytes waiting for client sockets, all connections.",
		func() float64 { return float64(m.OutboundBuffered.Load()) })
	r.CounterFunc("felix_publish_records_total", "Records acknowledged to publishers.", func() float64 { return u(m.PublishRecords.Load()) })
	r.Collect("felix_publish_requests_total", TypeCounter,
		"Publish requests by result: ok, or the wire error code they were refused with.", func(emit func(Sample)) {
			emit(Sample{Labels: Label("result", "ok"), Value: u(m.PublishResult(0))})
			m.EachPublishResult(func(code wire.Code, n uint64) {
				if code != 0 {
					emit(Sample{Labels: Label("result", code.String()), Value: u(n)})
				}
			})
		})
	r.GaugeFunc("felix_subscribers", "Live subscriptions.", func() float64 { return float64(m.SubscriptionsActive.Load()) })
	r.CounterFunc("felix_subscriber_dropped_records_total",
		"Records subscriptions dropped by their overflow policy or retention: each a gap in some subscriber's offsets.",
		func() float64 { return u(m.SubscriberDrops.Load()) })
}

func registerCaches(r *Registry, s *cache.Store) {
	r.Collect("felix_cache_operations_total", TypeCounter, "Cache operations asked for, refused ones included, by operation.",
		func(emit func(Sample)) {
			if s == nil {
				return
			}
			st := s.OpStats()
			for i, n := range st.Calls {
				emit(Sample{Labels: Label("op", cache.OpNames[i]), Value: float64(n)})
			}
		})
	r.CounterFunc("felix_cache_hits_total", "Cache gets that found a live value.", func() float64 {
		if s == nil {
			return 0
		}
		return float64(s.OpStats().Hits)
	})
	r.GaugeFunc("felix_cache_keys", "Keys indexed by every cache (expired ones until compaction removes them).", func() float64 {
		return float64(cacheKeys(s))
	})
}

func cacheKeys(s *cache.Store) int {
	if s == nil {
		return 0
	}
	keys := 0
	for _, info := range s.List("", "") {
		c, err := s.Cache(info.ID)
		if err != nil {
			continue // dropped meanwhile
		}
		for _, sh := range c.Stats() {
			keys += sh.Keys
		}
	}
	return keys
}

func registerGroups(r *Registry, m *group.Manager) {
	describe := func(emit func(Sample), value func(group.Description) float64) {
		if m == nil {
			return
		}
		for _, d := range m.DescribeOpen() {
			labels := Label("stream", d.Key.Stream.String()) + "," + Label("shard", strconv.Itoa(d.Key.Shard)) + "," + Label("group", d.Key.Group)
			emit(Sample{Labels: labels, Value: value(d)})
		}
	}
	r.Collect("felix_group_lag_records", TypeGauge, "Records of the shard not yet finished by the consumer group: end minus cursor.",
		func(emit func(Sample)) { describe(emit, func(d group.Description) float64 { return float64(d.Lag) }) })
	r.Collect("felix_group_dead_letters", TypeGauge, "Records the consumer group holds as dead letters.",
		func(emit func(Sample)) {
			describe(emit, func(d group.Description) float64 { return float64(d.DeadLetters) })
		})
	stat := func(f func(group.Stats) uint64) func() float64 {
		return func() float64 {
			if m == nil {
				return 0
			}
			return float64(f(m.Stats()))
		}
	}
	r.CounterFunc("felix_group_polls_total", "Consumer group polls.", stat(func(s group.Stats) uint64 { return s.Polls }))
	r.CounterFunc("felix_group_delivered_records_total", "Records delivered to consumer groups for the first time.", stat(func(s group.Stats) uint64 { return s.Delivered }))
	r.CounterFunc("felix_group_redelivered_records_total", "Records delivered again after a lapse, a nack or a redrive.", stat(func(s group.Stats) uint64 { return s.Redelivered }))
	r.CounterFunc("felix_group_acked_records_total", "Records acknowledged by consumers.", stat(func(s group.Stats) uint64 { return s.Acked }))
	r.CounterFunc("felix_group_lapsed_claims_total", "Claims that ran out before an ack.", stat(func(s group.Stats) uint64 { return s.Lapsed }))
	r.CounterFunc("felix_group_dead_lettered_records_total", "Records moved to dead letters.", stat(func(s group.Stats) uint64 { return s.DeadLettered }))
	r.CounterFunc("felix_group_dead_letters_expired_total", "Dead letters dropped past the dead-letter max age.", stat(func(s group.Stats) uint64 { return s.DeadExpired }))
	r.CounterFunc("felix_group_retention_skipped_records_total", "Records retention removed before a group finished them.", stat(func(s group.Stats) uint64 { return s.RetentionSkips }))
}
