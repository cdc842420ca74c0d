// Package e2e holds the end-to-end tests of the Go client and a real
// broker together: an engine and a netio server started in-process on
// 127.0.0.1:0, driven through package client. It has no code of its own
// beyond this comment; everything is in its tests.
//
// What the tests here must never do: reach into the broker's internals to
// make a check pass (they observe through the client, the server's
// Metrics, and frames captured on the client's own connection), or sleep
// to wait for something (they wait on the event itself, bounded by a
// deadline).
//
// The routing and delivery tests carry the contract's names
// (spec/semantics.md): TestKeysSpreadRecordsAcrossShards,
// TestOneKeyAlwaysLandsOnOneShard, TestAnUnkeyedPublishStillLandsOnShardZero,
// TestAKeyedPublishNegotiatesTheBinaryFrame,
// TestAnUnackedKeyedPublishReachesItsShard. bench_test.go measures publish
// throughput and publish-to-ack latency beside a bare TCP baseline taken
// in the same run.
//
// The cluster tests (cluster_*_test.go) start several brokers in this
// process with the production wiring (broker.Start with a ClusterConfig)
// over one in-memory control-plane store, and carry the contract's names
// for placement and routing: TestAShardedStreamIsPlacedAcrossBrokers,
// TestAPublishToANonOwnerIsStillForwarded,
// TestAKeyedPublishIsForwardedToTheShardsOwner,
// TestASubscribeToANonOwnerIsRedirected,
// TestAValueWrittenThroughOneBrokerIsReadableThroughEveryOther,
// TestTwoBrokersWritingOneKeyDoNotDiverge, TestANonLeaderNamesTheLeader,
// and TestUnauthorizedPublishIsRefused's forwarded ingress. Placement is
// a broker's own business, so they read each broker's view and data
// directory to say which broker holds what; what a client gets they
// observe through the client.
//
// The cluster client's tests (cluster_client_test.go, cluster_sharded_test.go,
// cluster_producer_failover_test.go, cluster_group_test.go,
// cluster_watch_test.go) drive client.ClusterClient against such a
// cluster, and carry the contract's names for it:
// TestAClusterClientFollowsTheRedirectToTheOwner,
// TestAClientGivenOneSeedLearnsTheOtherBrokers,
// TestAClientGivenOneSeedSurvivesLosingIt,
// TestAPublisherSurvivesLosingItsBroker,
// TestRecordsPublishedAcrossAFailoverAreAllReadable,
// TestAShardedSubscriptionReceivesEveryRecord,
// TestAnUnreachableShardRefusesTheSubscription,
// TestAShardedSubscriptionResumesFromItsPerShardOffsets. Those that stop a
// replicated shard's leader start their brokers with a short shard lease
// (startLeasedCluster), so a failover takes about a second, and wait for
// it through the client's own retries. cluster_client_bench_test.go
// measures the cluster client beside Clients routed by hand.
package e2e
