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
package e2e
