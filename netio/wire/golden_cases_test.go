package wire

// The golden cases: one or more per frame type, each an encoder call and
// the model its bytes must decode back into.

type goldenCase struct {
	name  string // testdata/wire/<name>.hex
	note  string // a line for the reader of the vector
	frame []byte
	want  any
}

var (
	gRef   = StreamRef{Tenant: []byte("acme"), Namespace: []byte("prod"), Stream: []byte("orders")}
	gCache = CacheRef{Tenant: []byte("acme"), Namespace: []byte("prod"), Cache: []byte("sessions")}
	gGroup = GroupRef{Stream: gRef, Shard: 2, Group: []byte("billing")}
	gSeq   = ProducerSeq{Shard: 1, ProducerID: 0x1122334455667788, Epoch: 3, Sequence: 41}
	gTS    = int64(1_700_000_000_123_456_789)

	gRecords = []Record{
		{Key: []byte("user-1"), Value: []byte("created"), Timestamp: gTS},
		{Key: []byte("user-2"), Value: []byte("paid")},
		{Value: []byte("unkeyed: shard 0"), Timestamp: gTS + 1},
	}
	gEvents = []Event{
		{Offset: 1000, Timestamp: gTS, Key: []byte("user-1"), Value: []byte("created")},
		{Offset: 1001, Timestamp: gTS + 5, Value: []byte("no key")},
		{Offset: 1004, Timestamp: gTS + 9, Flags: 0x0001, Key: []byte("user-2")},
	}
	// gControlEvents: a generation start at offset 0 pushed under
	// FeatureControlEvents, then the first record.
	gControlEvents = []Event{
		{Offset: 0, Timestamp: gTS, Flags: EventFlagControl | 0x0008},
		{Offset: 1, Timestamp: gTS + 3, Value: []byte("first")},
	}
	gGroupRecords = []GroupRecord{
		{Offset: 17, DeliveryCount: 1, Timestamp: gTS, Key: []byte("job-17"), Value: []byte("resize")},
		{Offset: 12, DeliveryCount: 3, Timestamp: gTS - 50, Value: []byte("retry me")},
	}
)

func goldenCases() []goldenCase {
	return append(append(append(sessionCases(), publishCases()...), streamCases()...),
		append(append(cacheCases(), groupCases()...), replicationCases()...)...)
}

func sessionCases() []goldenCase {
	hello := Hello{VersionMin: 1, VersionMax: 1, Features: FeaturesAll,
		Token: []byte("eyJhbGciOiJFZERTQSJ9.e30.c2ln"), ClientName: []byte("felix-go/0.1")}
	helloOK := HelloOK{Version: 1, BrokerID: []byte("broker-1"), Limits: Limits{}.Effective(),
		Features:            FeatureBinaryPublish | FeaturePublishKeyed | FeatureCache | FeatureCounters,
		InflightRequestsMax: 1024, IdleTimeoutMillis: 30_000}
	errNotLeader := Error{Code: CodeNotLeader, Name: "not_leader", Message: "shard 2 is led by broker-3",
		Details: Details{LeaderID: "broker-3", LeaderAddr: "10.0.0.3:7070", Shard: U32(2)}}
	peerHello := PeerHello{VersionMin: 1, VersionMax: 1, Features: PeerFeaturesRequired | FeatureCache | FeatureCounters,
		FrameBytesMax: DefaultFrameBytesMax, BrokerID: []byte("broker-2")}
	peerHelloOK := PeerHelloOK{Version: 1, Features: PeerFeaturesRequired | FeatureCache,
		FrameBytesMax: DefaultFrameBytesMax, InflightRequestsMax: 1024, BrokerID: []byte("broker-3")}
	brokers := BrokerListResult{Brokers: []BrokerInfo{{ID: "broker-1", Addr: "10.0.0.1:7070"}, {ID: "broker-3", Addr: "10.0.0.3:7070"}}}
	return []goldenCase{
		{"hello", "client: version 1..1, every feature, a token, a name", AppendHello(nil, 1, hello), &hello},
		{"hello_ok", "broker: version 1, the intersection, its id and limits", AppendHelloOK(nil, 1, helloOK), &helloOK},
		{"ping", "payload echoed by the PONG", AppendPing(nil, 2, 0xdeadbeef), pingModel{TypePing, 0xdeadbeef}},
		{"pong", "", AppendPong(nil, 2, 0xdeadbeef), pingModel{TypePong, 0xdeadbeef}},
		{"ok", "empty body", AppendOK(nil, 3), &OK{}},
		{"error", "not_leader: a redirect naming the owner", AppendError(nil, 4, &errNotLeader), &errNotLeader},
		{"broker_list", "", AppendControl(nil, 5, &BrokerList{}), &BrokerList{}},
		{"broker_list_result", "", AppendControl(nil, 5, &brokers), &brokers},
		{"peer_hello", "broker-2 dials a peer: peer protocol 1..1, binary keyed publish, cache, counters",
			AppendPeerHello(nil, 1, peerHello), &peerHello},
		{"peer_hello_ok", "broker-3 answers: version 1, the intersection, its limits and id",
			AppendPeerHelloOK(nil, 1, peerHelloOK), &peerHelloOK},
		{"forward", "broker-2 forwards a keyed PUBLISH_BATCH (ack per batch) for a shard broker-3 leads, with the client's token",
			AppendForward(nil, 6, forwardToken, forwardPublish), forwardModel{forwardToken, forwardPublish}},
		{"forward_no_credential", "a CACHE_GET forwarded for a client of a broker with auth off: credential length 0",
			AppendForward(nil, 7, nil, forwardGet), forwardModel{nil, forwardGet}},
	}
}

var (
	forwardToken   = []byte("eyJhbGciOiJFZERTQSJ9.e30.c2ln")
	forwardPublish = AppendPublishBatch(nil, 41, gRef, AckPerBatch, gRecords[:2])
	forwardGet     = AppendCacheGet(nil, 42, CacheGet{Cache: gCache, Key: []byte("user-1")})
)

func publishCases() []goldenCase {
	one := Record{Value: []byte("hello")}
	keyedOne := Record{Key: []byte("user-1"), Value: []byte("hello"), Timestamp: gTS}
	runs := []AckRun{{Shard: 0, FirstOffset: 500, Count: 1}, {Shard: 3, FirstOffset: 77, Count: 2}}
	idemAck := IdempotentAck{ProducerSeq: gSeq, FirstOffset: 9000, Count: 3, Duplicate: true}
	pub := func(t Type, ack AckMode, keyed, ts, idem bool, seq ProducerSeq, recs ...Record) publishModel {
		return publishModel{t, gRef, ack, keyed, ts, idem, seq, recs}
	}
	return []goldenCase{
		{"publish", "one unkeyed record, per-message ack", AppendPublish(nil, 10, gRef, AckPerMessage, one),
			pub(TypePublish, AckPerMessage, false, false, false, ProducerSeq{}, one)},
		{"publish_keyed", "one record under FlagKeyed|FlagTimestamp", AppendPublish(nil, 11, gRef, AckPerBatch, keyedOne),
			pub(TypePublish, AckPerBatch, true, true, false, ProducerSeq{}, keyedOne)},
		{"publish_batch", "three records: keyed, keyed, unkeyed (empty key)", AppendPublishBatch(nil, 12, gRef, AckPerBatch, gRecords),
			pub(TypePublishBatch, AckPerBatch, true, true, false, ProducerSeq{}, gRecords...)},
		{"publish_json", "the same batch for a peer without FeaturePublishKeyed", AppendPublishJSON(nil, 12, gRef, AckPerBatch, nil, gRecords),
			pub(TypePublishJSON, AckPerBatch, true, true, false, ProducerSeq{}, gRecords...)},
		{"publish_ack", "two runs: one record on shard 0, two on shard 3", AppendPublishAck(nil, 12, runs...), runs},
		{"publish_idempotent", "producer sequence 41 on shard 1", AppendPublishIdempotent(nil, 13, gRef, gSeq, gRecords[:2]),
			pub(TypePublishIdempotent, AckPerBatch, true, true, true, gSeq, gRecords[:2]...)},
		{"publish_idempotent_ack", "a re-send answered from memory", AppendPublishIdempotentAck(nil, 13, idemAck), &idemAck},
		{"producer_init", "", AppendControl(nil, 14, &ProducerInit{Stream: gRef, Shard: 1}), &ProducerInit{Stream: gRef, Shard: 1}},
		{"producer_init_ok", "", AppendControl(nil, 14, &ProducerInitOK{ProducerID: gSeq.ProducerID, Epoch: 3}),
			&ProducerInitOK{ProducerID: gSeq.ProducerID, Epoch: 3}},
	}
}

func streamCases() []goldenCase {
	cfg := StreamConfig{Shards: 4, Durable: true, Consistency: ConsistencyQuorum, ReplicationFactor: 3,
		Retention: Retention{MaxAgeSeconds: 86400, MaxSizeBytes: 1 << 30},
		Fsync:     FsyncMode{Kind: FsyncPeriodic, IntervalMillis: 1000},
		Delivery:  DeliveryAtLeastOnce, Kind: KindStream}
	info := StreamInfo{Stream: gRef, Config: cfg, Shards: []ShardInfo{{Shard: 0, LeaderID: "broker-1",
		LeaderAddr: "10.0.0.1:7070", Replicas: []string{"broker-1", "broker-2", "broker-3"}, Generation: 7,
		FirstOffset: 100, NextOffset: 2048}}}
	usage := info
	usage.Shards = []ShardInfo{info.Shards[0]}
	usage.Shards[0].Bytes, usage.Shards[0].FirstTime, usage.Shards[0].LastTime = 1<<20, 1700000000123456789, 1700000360000000000
	sub := Subscribe{Stream: gRef, Shard: 2, Start: Start{From: StartOffset, Offset: 1000},
		QueueCapacity: 4096, Overflow: OverflowDisconnect}
	bounded := Subscribe{Stream: gRef, Shard: 1, Start: Start{From: StartTime, Time: 1700000000123456789},
		UntilEnd: true, UntilOffset: U64(2048)}
	boundedOK := Subscribed{SubscriptionID: 10, FirstOffset: 1500, EndOffset: U64(2048)}
	atEnd := SubscriptionAtEnd{SubscriptionID: 10, EndOffset: 2048}
	ended := SubscriptionEnded{SubscriptionID: 9, Code: CodeSubscriberLagged, Message: "queue full", FirstMissedOffset: U64(1005)}
	list := StreamListResult{Streams: []StreamRef{gRef, {Tenant: gRef.Tenant, Namespace: gRef.Namespace, Stream: []byte("refunds")}}}
	return []goldenCase{
		{"subscribe", "shard 2 from offset 1000, Disconnect on overflow", AppendControl(nil, 20, &sub), &sub},
		{"subscribed", "", AppendControl(nil, 20, &Subscribed{SubscriptionID: 9, FirstOffset: 1000}), &Subscribed{SubscriptionID: 9, FirstOffset: 1000}},
		{"unsubscribe", "", AppendControl(nil, 21, &Unsubscribe{SubscriptionID: 9}), &Unsubscribe{SubscriptionID: 9}},
		{"subscription_ended", "pushed: lagged, resume from 1005", AppendControl(nil, 0, &ended), &ended},
		{"subscribe_bounded", "shard 1 from a time, until the end 2048 (a re-subscribe keeps its first end)", AppendControl(nil, 26, &bounded), &bounded},
		{"subscribed_bounded", "with the end it stops at", AppendControl(nil, 26, &boundedOK), &boundedOK},
		{"subscription_at_end", "pushed: every record below 2048 sent", AppendControl(nil, 0, &atEnd), &atEnd},
		{"event_batch", "pushed: offsets 1000, 1001, 1004 (1002-1003 not delivered)", AppendEventBatch(nil, 0, 9, 2, gEvents),
			eventBatchModel{9, 2, 1000, 1004, gEvents}},
		{"event_batch_control", "pushed under control_events: offset 0 holds no record (a generation start), 1 does",
			AppendEventBatch(nil, 0, 9, 2, gControlEvents), eventBatchModel{9, 2, 0, 1, gControlEvents}},
		{"stream_create", "", AppendControl(nil, 22, &StreamCreate{Stream: gRef, Config: cfg}), &StreamCreate{Stream: gRef, Config: cfg}},
		{"stream_delete", "", AppendControl(nil, 23, &StreamDelete{Stream: gRef}), &StreamDelete{Stream: gRef}},
		{"stream_describe", "", AppendControl(nil, 24, &StreamDescribe{Stream: gRef}), &StreamDescribe{Stream: gRef}},
		{"stream_info", "", AppendControl(nil, 24, &info), &info},
		{"stream_info_usage", "a shard's bytes and record times, added later in version 1", AppendControl(nil, 24, &usage), &usage},
		{"stream_list", "", AppendControl(nil, 25, &StreamList{Tenant: "acme", Namespace: "prod"}), &StreamList{Tenant: "acme", Namespace: "prod"}},
		{"stream_list_result", "", AppendControl(nil, 25, &list), &list},
	}
}

func cacheCases() []goldenCase {
	put := CachePut{Cache: gCache, Key: []byte("sess-42"), Condition: Condition{Kind: CondIfOffset, Offset: 310},
		Expiry: Expiry{Kind: ExpireAfter, TTLMillis: 60_000}, Value: []byte(`{"user":1}`)}
	del := CacheDelete{Cache: gCache, Key: []byte("sess-42"), Condition: Condition{Kind: CondIfOffset, Offset: 311}}
	get := CacheGet{Cache: gCache, Key: []byte("sess-42")}
	val := CacheValue{Found: true, Offset: 311, ExpiresAt: gTS + 60e9, Value: []byte(`{"user":1}`)}
	written := CacheWritten{Existed: true, Offset: 311, ExpiresAt: gTS + 60e9}
	watch := CacheWatch{Cache: gCache, Key: []byte("sess-"), Prefix: true, ResumeOffset: U64(300), Retained: true}
	started := WatchStarted{WatchID: 5, RetainedCount: 2, StartOffset: 312}
	ev := CacheWatchEvent{WatchID: 5, Offset: 311, Kind: WatchPut, Snapshot: true, Key: []byte("sess-42"), Value: []byte(`{"user":1}`)}
	ended := WatchEnded{WatchID: 5, Code: CodeCacheWatchLagged, Message: "watch queue overflowed", FirstMissedOffset: U64(400)}
	add := CounterAdd{Cache: gCache, Key: []byte("logins"), Delta: -3}
	cget := CounterGet{Cache: gCache, Key: []byte("logins")}
	cval := CounterValue{Exists: true, Sum: 39, Offset: 88}
	create := CacheCreate{Cache: gCache, Config: CacheConfig{Shards: 4, Durable: true, Fsync: FsyncMode{Kind: FsyncOnCommit}}}
	nothing := CacheWritten{Offset: ^uint64(0)}
	shardWatch := CacheWatch{Cache: gCache, Key: []byte("sess-"), Prefix: true, Shard: 3}
	resnap := WatchStarted{WatchID: 6, RetainedCount: 7, Resnapshot: true, StartOffset: 900, Shard: 3, Shards: 4}
	describe := CacheDescribe{Cache: gCache}
	info := CacheInfo{Cache: gCache, Config: CacheConfig{Shards: 2, ReplicationFactor: 3, Durable: true},
		Shards: []CacheShardInfo{
			{Shard: 0, LeaderID: "broker-1", LeaderAddr: "10.0.0.1:7117", Replicas: []string{"broker-1", "broker-2", "broker-3"}, Generation: 4},
			{Shard: 1, Replicas: []string{"broker-2", "broker-3", "broker-1"}, Generation: 2}}}
	return []goldenCase{
		{"cache_describe", "", AppendControl(nil, 40, &describe), &describe},
		{"cache_info", "shard 0 led by broker-1; shard 1 has no leader now", AppendControl(nil, 40, &info), &info},
		{"cache_create_fsync", "4 shards, durable, fsync on commit", AppendControl(nil, 39, &create), &create},
		{"cache_written_nothing", "a delete of a key with no live value: nothing appended, offset -1 as an i64",
			AppendCacheWritten(nil, 34, nothing), &nothing},
		{"cache_watch_shard", "prefix sess- on shard 3, live from now", AppendControl(nil, 35, &shardWatch), &shardWatch},
		{"watch_started_resnapshot", "the resume offset was compacted away: 7 current values replace the state",
			AppendControl(nil, 35, &resnap), &resnap},
		{"cache_create", "", AppendControl(nil, 30, &CacheCreate{Cache: gCache, Config: CacheConfig{Shards: 2, ReplicationFactor: 3, Durable: true}}),
			&CacheCreate{Cache: gCache, Config: CacheConfig{Shards: 2, ReplicationFactor: 3, Durable: true}}},
		{"cache_drop", "", AppendControl(nil, 31, &CacheDrop{Cache: gCache}), &CacheDrop{Cache: gCache}},
		{"cache_get", "", AppendCacheGet(nil, 32, get), &get},
		{"cache_put", "only if the offset is 310, expire 60 s after the write", AppendCachePut(nil, 33, put), &put},
		{"cache_delete", "only if the offset is 311", AppendCacheDelete(nil, 34, del), &del},
		{"cache_value", "found", AppendCacheValue(nil, 32, val), &val},
		{"cache_written", "replaced a value", AppendCacheWritten(nil, 33, written), &written},
		{"cache_watch", "prefix sess-, resume at 300, retained", AppendControl(nil, 35, &watch), &watch},
		{"watch_started", "two retained values come first", AppendControl(nil, 35, &started), &started},
		{"cache_watch_event", "pushed: a retained value (snapshot)", AppendCacheWatchEvent(nil, 0, ev), &ev},
		{"watch_ended", "pushed: lagged, first missed offset 400", AppendControl(nil, 0, &ended), &ended},
		{"cache_unwatch", "", AppendControl(nil, 36, &CacheUnwatch{WatchID: 5}), &CacheUnwatch{WatchID: 5}},
		{"counter_add", "", AppendCounterAdd(nil, 37, add), &add},
		{"counter_get", "", AppendCounterGet(nil, 38, cget), &cget},
		{"counter_value", "", AppendCounterValue(nil, 37, cval), &cval},
	}
}

func groupCases() []goldenCase {
	poll := GroupPoll{Group: gGroup, MaxRecords: 100, WaitMillis: 5000, ClaimMillis: 30_000}
	info := GroupInfo{Stream: gRef, Shard: 2, Group: "billing", Cursor: 12, InFlight: 2, DeadLetters: 1,
		RetentionSkipped: 0, ClaimMillis: 30_000, MaxDeliveries: 5}
	dl := GroupDeadLetters{Stream: gRef, Shard: 2, Group: "billing", AfterOffset: U64(3), Limit: 50}
	dlr := GroupDeadLettersResult{DeadLetters: []DeadLetter{{Offset: 4, DeliveryCount: 5, Reason: "max_deliveries"}}, More: true}
	redrive := GroupRedrive{Stream: gRef, Shard: 2, Group: "billing", Offsets: []uint64{4}}
	named := GroupRef{Stream: gRef, Shard: 2, Group: []byte("billing"), Consumer: []byte("worker-7")}
	namedPoll := GroupPoll{Group: named, MaxRecords: 100, WaitMillis: 5000}
	full := GroupInfo{Stream: gRef, Shard: 2, Group: "billing", Cursor: 12, InFlight: 2, DeadLetters: 1,
		RetentionSkipped: 3, NextOffset: 20, EndOffset: 25, Lag: 13, Owed: 1, Consumers: 2,
		Delivered: 8, Redelivered: 3, Acked: 5, Nacked: 1, Lapsed: 1, DeadLettered: 1, Redriven: 0}
	dlrFull := GroupDeadLettersResult{DeadLetters: []DeadLetter{{Offset: 4, DeliveryCount: 1,
		Reason: "rejected by a consumer", Detail: "worker-7: bad payload", At: gTS}}}
	notDead := GroupRedriveResult{Redriven: 1, NotDead: []uint64{9}}
	return []goldenCase{
		{"group_poll_consumer", "FLAG_GROUP_CONSUMER: consumer worker-7, claim for the group's default",
			AppendGroupPoll(nil, 48, namedPoll), &namedPoll},
		{"group_ack_consumer", "FLAG_GROUP_CONSUMER: worker-7 acks", AppendGroupAck(nil, 49, named, []uint64{17}),
			groupOffsetsModel{TypeGroupAck, named, 0, []uint64{17}}},
		{"group_nack_consumer", "FLAG_GROUP_CONSUMER: worker-7 nacks, redeliver after 2 s", AppendGroupNack(nil, 50, named, 2000, []uint64{12}),
			groupOffsetsModel{TypeGroupNack, named, 2000, []uint64{12}}},
		{"group_info_full", "every field, the later ones included", AppendControl(nil, 44, &full), &full},
		{"group_dead_letters_result_detail", "a rejected record with its detail and time", AppendControl(nil, 46, &dlrFull), &dlrFull},
		{"group_redrive_result_not_dead", "offset 9 was not a dead letter", AppendControl(nil, 47, &notDead), &notDead},
		{"group_poll", "up to 100 records, wait 5 s, claim 30 s", AppendGroupPoll(nil, 40, poll), &poll},
		{"group_records", "a new record and a third delivery of an older one", AppendGroupRecords(nil, 40, 2, gGroupRecords),
			groupRecordsModel{2, gGroupRecords}},
		{"group_ack", "", AppendGroupAck(nil, 41, gGroup, []uint64{17, 12}), groupOffsetsModel{TypeGroupAck, gGroup, 0, []uint64{17, 12}}},
		{"group_nack", "redeliver after 1 s", AppendGroupNack(nil, 42, gGroup, 1000, []uint64{17}),
			groupOffsetsModel{TypeGroupNack, gGroup, 1000, []uint64{17}}},
		{"group_extend", "keep the claims 30 s longer", AppendGroupExtend(nil, 43, gGroup, 30_000, []uint64{12, 17}),
			groupOffsetsModel{TypeGroupExtend, gGroup, 30_000, []uint64{12, 17}}},
		{"group_result", "one applied, offset 12's claim had lapsed", AppendGroupResult(nil, 41, 1, []uint64{12}), groupResultModel{1, []uint64{12}}},
		{"group_describe", "", AppendControl(nil, 44, &GroupDescribe{Stream: gRef, Shard: 2, Group: "billing"}),
			&GroupDescribe{Stream: gRef, Shard: 2, Group: "billing"}},
		{"group_info", "", AppendControl(nil, 44, &info), &info},
		{"group_list", "", AppendControl(nil, 45, &GroupList{Stream: gRef, Shard: 2}), &GroupList{Stream: gRef, Shard: 2}},
		{"group_list_result", "", AppendControl(nil, 45, &GroupListResult{Groups: []string{"billing", "audit"}}),
			&GroupListResult{Groups: []string{"billing", "audit"}}},
		{"group_dead_letters", "", AppendControl(nil, 46, &dl), &dl},
		{"group_dead_letters_result", "", AppendControl(nil, 46, &dlr), &dlr},
		{"group_redrive", "", AppendControl(nil, 47, &redrive), &redrive},
		{"group_redrive_result", "", AppendControl(nil, 47, &GroupRedriveResult{Redriven: 1}), &GroupRedriveResult{Redriven: 1}},
	}
}
