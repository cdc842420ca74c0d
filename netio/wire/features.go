package wire

import (
	"fmt"
	"math/bits"
	"strings"
)

// Features is the u64 set of optional capabilities a peer advertises in
// HELLO; HELLO_OK answers with the intersection, and only that intersection
// may be used on the session. Bits not assigned below are reserved: a peer
// never sets them, and a receiver ignores them (the intersection drops them).
type Features uint64

// Feature bits, protocol version 1. FeaturePublishKeyed's value is fixed by
// contract (FLAG_BINARY_PUBLISH_KEYED = 0x0040); the others are frozen here.
const (
	// FeatureBinaryPublish: PUBLISH and PUBLISH_BATCH. Without it every
	// publish travels as PUBLISH_JSON.
	FeatureBinaryPublish Features = 0x0001
	// FeatureCache: CACHE_CREATE/DROP/GET/PUT/DELETE and their answers.
	FeatureCache Features = 0x0002
	// FeatureCacheWatch: CACHE_WATCH, CACHE_WATCH_EVENT and the rest of a
	// watch's life (FEATURE_CACHE_WATCH).
	FeatureCacheWatch Features = 0x0004
	// FeatureCacheWatchRetained: a CACHE_WATCH with retained set
	// (FEATURE_CACHE_WATCH_RETAINED). A bit of its own so an older
	// watch-capable broker is never asked for state it would not deliver.
	FeatureCacheWatchRetained Features = 0x0008
	// FeatureCounters: COUNTER_ADD, COUNTER_GET, COUNTER_VALUE.
	FeatureCounters Features = 0x0010
	// FeatureIdempotentProducers: PRODUCER_INIT and PUBLISH_IDEMPOTENT.
	FeatureIdempotentProducers Features = 0x0020
	// FeaturePublishKeyed: publish frames may carry FlagKeyed
	// (FLAG_BINARY_PUBLISH_KEYED). Without it a keyed publish travels as
	// PUBLISH_JSON, which costs throughput, not correctness.
	FeaturePublishKeyed Features = 0x0040
	// FeatureConsumerGroups: the GROUP_* frames.
	FeatureConsumerGroups Features = 0x0080
	// FeatureTLS: reserved for a listener that can upgrade the session to
	// TLS in place. No frame uses it in version 1.
	FeatureTLS Features = 0x0100
	// FeatureDiscovery: BROKER_LIST, which names the other brokers of the
	// cluster.
	FeatureDiscovery Features = 0x0200
	// FeatureCacheDescribe: CACHE_DESCRIBE and CACHE_INFO, which name a
	// cache's shards and their leaders. A bit of its own because a broker
	// without it does not know the frame type and would close the
	// connection on it.
	FeatureCacheDescribe Features = 0x0400
	// FeatureSubscribeBounds: a SUBSCRIBE may start at a time (start.from
	// "time") and ask to end at the shard's end (until_end), which the
	// broker marks with SUBSCRIPTION_AT_END. A bit of its own because a
	// broker without it would refuse the start and ignore until_end: the
	// subscriber would wait forever for an end that never comes.
	FeatureSubscribeBounds Features = 0x0800
	// FeatureCacheConsistency: a CACHE_CREATE's config may carry a
	// consistency (Quorum). A bit of its own because a broker without it
	// would take the field for unknown and create a Leader cache.
	FeatureCacheConsistency Features = 0x1000
	// FeatureControlEvents: the broker pushes a log's control records (a
	// replicated shard's generation start) in EVENT_BATCH as events whose
	// flags carry EventFlagControl, with no key and no value, so that the
	// subscriber knows those offsets hold no record and does not take the
	// gap for a drop. A bit of its own because an older client would hand
	// such an event to its application as a record. Without it the broker
	// skips control records and their offsets are gaps like a drop's.
	FeatureControlEvents Features = 0x2000

	// FeaturesReserved are the bits kept for later versions: every bit
	// FeaturesAll does not name.
	FeaturesReserved Features = ^FeaturesAll
	// FeaturesAll is every feature this package implements.
	FeaturesAll Features = 0x0FFF | FeatureCacheConsistency | FeatureControlEvents
)

var featureNames = [...]string{
	"binary_publish", "cache", "cache_watch", "cache_watch_retained",
	"counters", "idempotent_producers", "publish_keyed", "consumer_groups",
	"tls", "discovery", "cache_describe", "subscribe_bounds", "cache_consistency",
	"control_events",
}

// Has reports whether every bit of want is in f.
func (f Features) Has(want Features) bool { return f&want == want }

// String lists the set bits by name, "|"-separated; reserved bits show as
// bit numbers.
func (f Features) String() string {
	if f == 0 {
		return "none"
	}
	var parts []string
	for v := uint64(f); v != 0; v &= v - 1 {
		i := bits.TrailingZeros64(v)
		if i < len(featureNames) && featureNames[i] != "" {
			parts = append(parts, featureNames[i])
		} else {
			parts = append(parts, "bit"+utoa(uint64(i)))
		}
	}
	return strings.Join(parts, "|")
}

// Negotiate is the server's side of the handshake, pure: the version both
// peers speak (the highest in both ranges) and the features both have. A
// client whose range misses the server's gets ErrUnsupportedVersion.
func Negotiate(hello Hello, serverFeatures Features) (version uint16, features Features, err error) {
	lo, hi := max(hello.VersionMin, ProtocolVersionMin), min(hello.VersionMax, ProtocolVersion)
	if hello.VersionMin > hello.VersionMax || lo > hi {
		return 0, 0, &Error{Code: CodeUnsupportedVersion, Message: fmt.Sprintf(
			"client speaks versions %d..%d, this broker %d..%d",
			hello.VersionMin, hello.VersionMax, ProtocolVersionMin, ProtocolVersion)}
	}
	return hi, hello.Features & serverFeatures & FeaturesAll, nil
}
