package netio

import (
	"slices"
	"testing"
	"time"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/netio/wire"
)

func TestStreamsAreCreatedDescribedListedAndDeletedOverTheWire(t *testing.T) {
	b := startBroker(t)
	c := b.client(wire.FeaturesAll)
	ref := wire.StreamRef{Tenant: []byte("acme"), Namespace: []byte("prod"), Stream: []byte("orders")}
	cfg := wire.StreamConfig{Shards: 4, Consistency: wire.ConsistencyLeader,
		Retention: wire.Retention{MaxAgeSeconds: 3600, MaxSizeBytes: 1 << 30},
		Fsync:     wire.FsyncMode{Kind: wire.FsyncPeriodic, IntervalMillis: 250},
		Delivery:  wire.DeliveryAtLeastOnce, Kind: wire.KindQueue}

	info := decodeControl[wire.StreamInfo](t, c.control(&wire.StreamCreate{Stream: ref, Config: cfg}))
	want := cfg
	want.ReplicationFactor = 1
	if info.Stream.String() != "acme/prod/orders" || info.Config != want || len(info.Shards) != 4 {
		t.Fatalf("created %+v", info)
	}
	if sh := info.Shards[3]; sh.Shard != 3 || sh.LeaderID != "b1" || sh.LeaderAddr != b.s.Addr().String() || sh.Generation != 1 {
		t.Fatalf("shard %+v", sh)
	}
	if e := decodeErr(c.control(&wire.StreamCreate{Stream: ref})); e == nil || e.Code != wire.CodeAlreadyExists {
		t.Fatalf("second create: %v", e)
	}

	c.send(wire.AppendPublishBatch(nil, 100, ref, wire.AckPerBatch, []wire.Record{{Value: []byte("a")}, {Value: []byte("b")}}))
	ackOf(t, c.read())
	info = decodeControl[wire.StreamInfo](t, c.control(&wire.StreamDescribe{Stream: ref}))
	if info.Shards[0].FirstOffset != 0 || info.Shards[0].NextOffset != 2 || info.Config != want {
		t.Fatalf("described %+v", info)
	}

	other := wire.StreamRef{Tenant: []byte("acme"), Namespace: []byte("dev"), Stream: []byte("x")}
	decodeControl[wire.StreamInfo](t, c.control(&wire.StreamCreate{Stream: other}))
	list := decodeControl[wire.StreamListResult](t, c.control(&wire.StreamList{Tenant: "acme", Namespace: "prod"}))
	if len(list.Streams) != 1 || list.Streams[0].String() != "acme/prod/orders" {
		t.Fatalf("listed %+v", list.Streams)
	}

	if f := c.control(&wire.StreamDelete{Stream: ref}); f.Type != wire.TypeOK {
		t.Fatalf("delete answered %v: %v", f.Type, decodeErr(f))
	}
	for _, m := range []wire.Control{&wire.StreamDescribe{Stream: ref}, &wire.StreamDelete{Stream: ref}} {
		if e := decodeErr(c.control(m)); e == nil || e.Code != wire.CodeNotFound {
			t.Fatalf("%v after delete: %v", m.FrameType(), e)
		}
	}
	empty := decodeControl[wire.StreamListResult](t, c.control(&wire.StreamList{Tenant: "nobody"}))
	if empty.Streams == nil || len(empty.Streams) != 0 {
		t.Fatalf("an empty list is %#v", empty.Streams)
	}
}

func TestStreamCreateRefusalsNameTheField(t *testing.T) {
	b := startBroker(t)
	c := b.client(wire.FeaturesAll)
	ref := wire.StreamRef{Tenant: []byte("acme"), Namespace: []byte("prod"), Stream: []byte("s")}
	cases := []struct {
		m     wire.StreamCreate
		field string
	}{
		{wire.StreamCreate{Stream: ref, Config: wire.StreamConfig{Durable: true}}, "config.durable"},
		{wire.StreamCreate{Stream: ref, Config: wire.StreamConfig{ReplicationFactor: 3}}, "config"},
		{wire.StreamCreate{Stream: ref, Config: wire.StreamConfig{Shards: engine.ShardsMax + 1}}, "config"},
		{wire.StreamCreate{Stream: ref, Config: wire.StreamConfig{Retention: wire.Retention{MaxAgeSeconds: 1 << 62}}}, "retention.max_age_seconds"},
		{wire.StreamCreate{Stream: wire.StreamRef{Tenant: []byte(".."), Namespace: []byte("n"), Stream: []byte("s")}}, "stream"},
		{wire.StreamCreate{Stream: ref, Config: wire.StreamConfig{Kind: "Table"}}, "kind"},
	}
	for _, tc := range cases {
		e := decodeErr(c.control(&tc.m))
		if e == nil || e.Code != wire.CodeInvalidArgument || e.Details.Field != tc.field {
			t.Errorf("%+v: %v", tc.m.Config, e)
		}
	}
}

func TestConfigTranslationRoundTrips(t *testing.T) {
	in := wire.StreamConfig{Shards: 3, Durable: true, Consistency: wire.ConsistencyQuorum, ReplicationFactor: 3,
		Retention: wire.Retention{MaxAgeSeconds: 60, MaxSizeBytes: 4096},
		Fsync:     wire.FsyncMode{Kind: wire.FsyncOnCommit}, Delivery: wire.DeliveryAtMostOnce, Kind: wire.KindCache}
	ec, err := engineConfig(in)
	if err != nil {
		t.Fatal(err)
	}
	if ec.Retention.MaxAge != time.Minute || ec.Fsync.Kind != "OnCommit" || ec.Shards != 3 {
		t.Fatalf("engine config %+v", ec)
	}
	if out := wireConfig(ec); out != in {
		t.Fatalf("round trip %+v != %+v", out, in)
	}
}

func TestBrokerListNamesThisBroker(t *testing.T) {
	b := startBroker(t, func(c *Config) { c.AdvertiseAddr = "broker.example:7117" })
	c := b.client(wire.FeaturesAll)
	r := decodeControl[wire.BrokerListResult](t, c.control(&wire.BrokerList{}))
	if len(r.Brokers) != 1 || r.Brokers[0] != (wire.BrokerInfo{ID: "b1", Addr: "broker.example:7117"}) {
		t.Fatalf("brokers %+v", r.Brokers)
	}
	noDiscovery := b.client(wire.FeatureBinaryPublish)
	noDiscovery.send(wire.AppendControl(nil, 4, &wire.BrokerList{}))
	noDiscovery.expectError(wire.CodeFeatureNotNegotiated, 4)
}

// In a cluster, BROKER_LIST names every broker Config.Brokers lists (the
// cluster's registrations), not this one alone: a client given one seed
// learns the others.
func TestBrokerListNamesTheClustersBrokers(t *testing.T) {
	cluster := []wire.BrokerInfo{{ID: "a", Addr: "10.0.0.1:7117"}, {ID: "b1", Addr: "10.0.0.2:7117"}, {ID: "c", Addr: "10.0.0.3:7117"}}
	b := startBroker(t, func(c *Config) { c.Brokers = func() []wire.BrokerInfo { return cluster } })
	r := decodeControl[wire.BrokerListResult](t, b.client(wire.FeaturesAll).control(&wire.BrokerList{}))
	if !slices.Equal(r.Brokers, cluster) {
		t.Fatalf("brokers %+v, want %+v", r.Brokers, cluster)
	}
}
