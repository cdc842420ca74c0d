package client

import "github.com/felixbroker/felix/netio/wire"

// Features is a set of the protocol's optional capabilities
// (docs/protocol.md, "Handshake"): what a client offers in HELLO
// (WithFeatures) and what both peers offered (Session.Features). The bits
// are the protocol's, frozen.
type Features uint64

// The feature bits of protocol version 1.
const (
	FeatureBinaryPublish       = Features(wire.FeatureBinaryPublish)       // PUBLISH and PUBLISH_BATCH
	FeatureCache               = Features(wire.FeatureCache)               // cache operations
	FeatureCacheWatch          = Features(wire.FeatureCacheWatch)          // cache watches
	FeatureCacheWatchRetained  = Features(wire.FeatureCacheWatchRetained)  // retained cache watches
	FeatureCounters            = Features(wire.FeatureCounters)            // counters
	FeatureIdempotentProducers = Features(wire.FeatureIdempotentProducers) // Producer
	FeaturePublishKeyed        = Features(wire.FeaturePublishKeyed)        // keyed binary publishes
	FeatureConsumerGroups      = Features(wire.FeatureConsumerGroups)      // Group
	FeatureDiscovery           = Features(wire.FeatureDiscovery)           // BROKER_LIST, for ClusterClient
	FeatureCacheDescribe       = Features(wire.FeatureCacheDescribe)       // Cache.Describe, for ClusterClient's cache routing
	FeatureCacheConsistency    = Features(wire.FeatureCacheConsistency)    // a cache created at ConsistencyQuorum
)

// Has reports whether every bit of want is in f.
func (f Features) Has(want Features) bool { return f&want == want }

// String lists the bits by name, such as "cache|publish_keyed".
func (f Features) String() string { return wire.Features(f).String() }

// Limits bound frames, batches, keys, names and tokens (docs/protocol.md,
// "Limits"). A zero field is the protocol's default.
type Limits struct {
	FrameBytesMax   int // a whole frame, header included
	BatchRecordsMax int // the records of a batch, the offsets of a group ack
	KeyBytesMax     int // a routing or cache key
	NameBytesMax    int // tenant, namespace, stream, cache, group and client names
	TokenBytesMax   int // HELLO's auth token
}

func (l Limits) wire() wire.Limits {
	return wire.Limits{FrameBytesMax: l.FrameBytesMax, BatchRecordsMax: l.BatchRecordsMax,
		KeyBytesMax: l.KeyBytesMax, NameBytesMax: l.NameBytesMax, TokenBytesMax: l.TokenBytesMax}
}

func limitsFrom(l wire.Limits) Limits {
	return Limits{FrameBytesMax: l.FrameBytesMax, BatchRecordsMax: l.BatchRecordsMax,
		KeyBytesMax: l.KeyBytesMax, NameBytesMax: l.NameBytesMax, TokenBytesMax: l.TokenBytesMax}
}
