package wire

import "fmt"

// Type is the u16 frame type of the header. The high byte is the family
// (session, publish, subscribe, stream, cache, counter, group), the low byte
// the frame within it. Numbers are frozen once released; new frames take new
// numbers.
type Type uint16

// Frame types, protocol version 1.
const (
	TypeHello            Type = 0x0001
	TypeHelloOK          Type = 0x0002
	TypePing             Type = 0x0003
	TypePong             Type = 0x0004
	TypeOK               Type = 0x0005
	TypeError            Type = 0x0006
	TypeBrokerList       Type = 0x0007
	TypeBrokerListResult Type = 0x0008
	TypePeerHello        Type = 0x0009 // peer.go: brokers only
	TypePeerHelloOK      Type = 0x000A
	TypeForward          Type = 0x000B // forward.go: brokers only

	TypePublish              Type = 0x0100
	TypePublishBatch         Type = 0x0101
	TypePublishJSON          Type = 0x0102
	TypePublishAck           Type = 0x0103
	TypePublishIdempotent    Type = 0x0104
	TypePublishIdempotentAck Type = 0x0105
	TypeProducerInit         Type = 0x0106
	TypeProducerInitOK       Type = 0x0107

	TypeSubscribe         Type = 0x0200
	TypeSubscribed        Type = 0x0201
	TypeUnsubscribe       Type = 0x0202
	TypeSubscriptionEnded Type = 0x0203
	TypeEventBatch        Type = 0x0204
	TypeSubscriptionAtEnd Type = 0x0205

	TypeStreamCreate     Type = 0x0300
	TypeStreamDelete     Type = 0x0301
	TypeStreamDescribe   Type = 0x0302
	TypeStreamInfo       Type = 0x0303
	TypeStreamList       Type = 0x0304
	TypeStreamListResult Type = 0x0305

	TypeCacheCreate     Type = 0x0400
	TypeCacheDrop       Type = 0x0401
	TypeCacheGet        Type = 0x0402
	TypeCachePut        Type = 0x0403
	TypeCacheDelete     Type = 0x0404
	TypeCacheValue      Type = 0x0405
	TypeCacheWritten    Type = 0x0406
	TypeCacheWatch      Type = 0x0407
	TypeWatchStarted    Type = 0x0408
	TypeCacheWatchEvent Type = 0x0409
	TypeWatchEnded      Type = 0x040A
	TypeCacheUnwatch    Type = 0x040B
	TypeCacheDescribe   Type = 0x040C
	TypeCacheInfo       Type = 0x040D

	TypeCounterAdd   Type = 0x0500
	TypeCounterGet   Type = 0x0501
	TypeCounterValue Type = 0x0502

	TypeGroupPoll              Type = 0x0600
	TypeGroupRecords           Type = 0x0601
	TypeGroupAck               Type = 0x0602
	TypeGroupNack              Type = 0x0603
	TypeGroupExtend            Type = 0x0604
	TypeGroupResult            Type = 0x0605
	TypeGroupDescribe          Type = 0x0606
	TypeGroupInfo              Type = 0x0607
	TypeGroupList              Type = 0x0608
	TypeGroupListResult        Type = 0x0609
	TypeGroupDeadLetters       Type = 0x060A
	TypeGroupDeadLettersResult Type = 0x060B
	TypeGroupRedrive           Type = 0x060C
	TypeGroupRedriveResult     Type = 0x060D

	// replicate.go: brokers only
	TypeReplicate       Type = 0x0700
	TypeReplicateAck    Type = 0x0701
	TypeFence           Type = 0x0702
	TypeFenceOK         Type = 0x0703
	TypeGenerationEnd   Type = 0x0704
	TypeGenerationEndOK Type = 0x0705
	TypeHeartbeat       Type = 0x0706
	TypeLeaseGrant      Type = 0x0707
	TypeLogRead         Type = 0x0708
)

// typeSpec is what the protocol says about one frame type.
type typeSpec struct {
	name    string
	flags   Flags      // header flag bits the type may carry
	feature Features   // features both peers must have negotiated
	json    bool       // body is a JSON object
	bound   frameBound // the type's own size bound (frame_bounds.go)
}

const (
	familyCount  = 8
	memberCount  = 16
	publishFlags = FlagTimestamp | FlagKeyed
	groupFlags   = FlagGroupConsumer
)

// typeList is the single list of frame types; specs is built from it.
var typeList = []struct {
	t Type
	s typeSpec
}{
	{TypeHello, typeSpec{name: "HELLO", bound: boundHello}},
	{TypeHelloOK, typeSpec{name: "HELLO_OK"}},
	{TypePing, typeSpec{name: "PING", bound: boundPing}},
	{TypePong, typeSpec{name: "PONG", bound: boundPing}},
	{TypeOK, typeSpec{name: "OK"}},
	{TypeError, typeSpec{name: "ERROR"}},
	{TypeBrokerList, typeSpec{name: "BROKER_LIST", feature: FeatureDiscovery, json: true, bound: boundControl}},
	{TypeBrokerListResult, typeSpec{name: "BROKER_LIST_RESULT", feature: FeatureDiscovery, json: true}},
	{TypePeerHello, typeSpec{name: "PEER_HELLO", bound: boundPeerHello}},
	{TypePeerHelloOK, typeSpec{name: "PEER_HELLO_OK"}},
	{TypeForward, typeSpec{name: "FORWARD"}},

	{TypePublish, typeSpec{name: "PUBLISH", flags: publishFlags, feature: FeatureBinaryPublish}},
	{TypePublishBatch, typeSpec{name: "PUBLISH_BATCH", flags: publishFlags, feature: FeatureBinaryPublish}},
	{TypePublishJSON, typeSpec{name: "PUBLISH_JSON", json: true}},
	{TypePublishAck, typeSpec{name: "PUBLISH_ACK"}},
	{TypePublishIdempotent, typeSpec{name: "PUBLISH_IDEMPOTENT", flags: publishFlags, feature: FeatureIdempotentProducers}},
	{TypePublishIdempotentAck, typeSpec{name: "PUBLISH_IDEMPOTENT_ACK", feature: FeatureIdempotentProducers}},
	{TypeProducerInit, typeSpec{name: "PRODUCER_INIT", feature: FeatureIdempotentProducers, json: true, bound: boundControl}},
	{TypeProducerInitOK, typeSpec{name: "PRODUCER_INIT_OK", feature: FeatureIdempotentProducers, json: true}},

	{TypeSubscribe, typeSpec{name: "SUBSCRIBE", json: true, bound: boundControl}},
	{TypeSubscribed, typeSpec{name: "SUBSCRIBED", json: true}},
	{TypeUnsubscribe, typeSpec{name: "UNSUBSCRIBE", json: true, bound: boundControl}},
	{TypeSubscriptionEnded, typeSpec{name: "SUBSCRIPTION_ENDED", json: true}},
	{TypeEventBatch, typeSpec{name: "EVENT_BATCH"}},
	{TypeSubscriptionAtEnd, typeSpec{name: "SUBSCRIPTION_AT_END", feature: FeatureSubscribeBounds, json: true}},

	{TypeStreamCreate, typeSpec{name: "STREAM_CREATE", json: true, bound: boundControl}},
	{TypeStreamDelete, typeSpec{name: "STREAM_DELETE", json: true, bound: boundControl}},
	{TypeStreamDescribe, typeSpec{name: "STREAM_DESCRIBE", json: true, bound: boundControl}},
	{TypeStreamInfo, typeSpec{name: "STREAM_INFO", json: true}},
	{TypeStreamList, typeSpec{name: "STREAM_LIST", json: true, bound: boundControl}},
	{TypeStreamListResult, typeSpec{name: "STREAM_LIST_RESULT", json: true}},

	{TypeCacheCreate, typeSpec{name: "CACHE_CREATE", feature: FeatureCache, json: true, bound: boundControl}},
	{TypeCacheDrop, typeSpec{name: "CACHE_DROP", feature: FeatureCache, json: true, bound: boundControl}},
	{TypeCacheGet, typeSpec{name: "CACHE_GET", feature: FeatureCache}},
	{TypeCachePut, typeSpec{name: "CACHE_PUT", feature: FeatureCache}},
	{TypeCacheDelete, typeSpec{name: "CACHE_DELETE", feature: FeatureCache}},
	{TypeCacheValue, typeSpec{name: "CACHE_VALUE", feature: FeatureCache}},
	{TypeCacheWritten, typeSpec{name: "CACHE_WRITTEN", feature: FeatureCache}},
	{TypeCacheWatch, typeSpec{name: "CACHE_WATCH", feature: FeatureCache | FeatureCacheWatch, json: true}},
	{TypeWatchStarted, typeSpec{name: "WATCH_STARTED", feature: FeatureCache | FeatureCacheWatch, json: true}},
	{TypeCacheWatchEvent, typeSpec{name: "CACHE_WATCH_EVENT", feature: FeatureCache | FeatureCacheWatch}},
	{TypeWatchEnded, typeSpec{name: "WATCH_ENDED", feature: FeatureCache | FeatureCacheWatch, json: true}},
	{TypeCacheUnwatch, typeSpec{name: "CACHE_UNWATCH", feature: FeatureCache | FeatureCacheWatch, json: true, bound: boundControl}},
	{TypeCacheDescribe, typeSpec{name: "CACHE_DESCRIBE", feature: FeatureCache | FeatureCacheDescribe, json: true, bound: boundControl}},
	{TypeCacheInfo, typeSpec{name: "CACHE_INFO", feature: FeatureCache | FeatureCacheDescribe, json: true}},

	{TypeCounterAdd, typeSpec{name: "COUNTER_ADD", feature: FeatureCounters}},
	{TypeCounterGet, typeSpec{name: "COUNTER_GET", feature: FeatureCounters}},
	{TypeCounterValue, typeSpec{name: "COUNTER_VALUE", feature: FeatureCounters}},

	{TypeGroupPoll, typeSpec{name: "GROUP_POLL", flags: groupFlags, feature: FeatureConsumerGroups}},
	{TypeGroupRecords, typeSpec{name: "GROUP_RECORDS", feature: FeatureConsumerGroups}},
	{TypeGroupAck, typeSpec{name: "GROUP_ACK", flags: groupFlags, feature: FeatureConsumerGroups}},
	{TypeGroupNack, typeSpec{name: "GROUP_NACK", flags: groupFlags, feature: FeatureConsumerGroups}},
	{TypeGroupExtend, typeSpec{name: "GROUP_EXTEND", flags: groupFlags, feature: FeatureConsumerGroups}},
	{TypeGroupResult, typeSpec{name: "GROUP_RESULT", feature: FeatureConsumerGroups}},
	{TypeGroupDescribe, typeSpec{name: "GROUP_DESCRIBE", feature: FeatureConsumerGroups, json: true, bound: boundControl}},
	{TypeGroupInfo, typeSpec{name: "GROUP_INFO", feature: FeatureConsumerGroups, json: true}},
	{TypeGroupList, typeSpec{name: "GROUP_LIST", feature: FeatureConsumerGroups, json: true, bound: boundControl}},
	{TypeGroupListResult, typeSpec{name: "GROUP_LIST_RESULT", feature: FeatureConsumerGroups, json: true}},
	{TypeGroupDeadLetters, typeSpec{name: "GROUP_DEAD_LETTERS", feature: FeatureConsumerGroups, json: true, bound: boundControl}},
	{TypeGroupDeadLettersResult, typeSpec{name: "GROUP_DEAD_LETTERS_RESULT", feature: FeatureConsumerGroups, json: true}},
	{TypeGroupRedrive, typeSpec{name: "GROUP_REDRIVE", feature: FeatureConsumerGroups, json: true}},
	{TypeGroupRedriveResult, typeSpec{name: "GROUP_REDRIVE_RESULT", feature: FeatureConsumerGroups, json: true}},

	{TypeReplicate, typeSpec{name: "REPLICATE"}},
	{TypeReplicateAck, typeSpec{name: "REPLICATE_ACK"}},
	{TypeFence, typeSpec{name: "FENCE"}},
	{TypeFenceOK, typeSpec{name: "FENCE_OK"}},
	{TypeGenerationEnd, typeSpec{name: "GENERATION_END"}},
	{TypeGenerationEndOK, typeSpec{name: "GENERATION_END_OK"}},
	{TypeHeartbeat, typeSpec{name: "HEARTBEAT"}},
	{TypeLeaseGrant, typeSpec{name: "LEASE_GRANT"}},
	{TypeLogRead, typeSpec{name: "LOG_READ"}},
}

// specs is indexed by [family][member]; name == "" marks an unknown type.
var specs = func() (s [familyCount][memberCount]typeSpec) {
	for _, e := range typeList {
		fam, mem := int(e.t>>8), int(e.t&0xff)
		if fam >= familyCount || mem >= memberCount || s[fam][mem].name != "" {
			panic("felix/wire: frame type table is inconsistent at " + e.s.name)
		}
		s[fam][mem] = e.s
	}
	return s
}()

func specOf(t Type) (typeSpec, bool) {
	fam, mem := int(t>>8), int(t&0xff)
	if fam >= familyCount || mem >= memberCount || specs[fam][mem].name == "" {
		return typeSpec{}, false
	}
	return specs[fam][mem], true
}

// Known reports whether t is a frame type of this protocol version.
func (t Type) Known() bool { _, ok := specOf(t); return ok }

// JSON reports whether frames of type t carry a JSON object as their body.
func (t Type) JSON() bool { s, _ := specOf(t); return s.json }

// String is the protocol name of t, such as "PUBLISH_BATCH".
func (t Type) String() string {
	if s, ok := specOf(t); ok {
		return s.name
	}
	return fmt.Sprintf("TYPE(0x%04x)", uint16(t))
}

// Types lists every frame type of this protocol version in number order.
func Types() []Type {
	out := make([]Type, len(typeList))
	for i, e := range typeList {
		out[i] = e.t
	}
	return out
}

// RequiredFeatures is the set of features a session must have negotiated
// before a frame of type t with these flags may cross it, in either
// direction. A CACHE_WATCH asking for retained state also needs
// FeatureCacheWatchRetained; that is in its body, so the receiver checks
// CacheWatch.Retained itself.
func RequiredFeatures(t Type, flags Flags) Features {
	s, _ := specOf(t)
	need := s.feature
	if flags&FlagKeyed != 0 {
		need |= FeaturePublishKeyed
	}
	return need
}
