package wire

// The golden cases of the replication frames (replicate.go).

var gLog = LogRef{Kind: 1, Tenant: []byte("acme"), Namespace: []byte("prod"), Name: []byte("orders"), Shard: 2}

func replicationCases() []goldenCase {
	records := []byte{0xde, 0xad, 0xbe, 0xef} // opaque to the frame: the follower walks them
	rep := Replicate{Log: gLog, Generation: 4, First: 1000, PrevGen: 3, Commit: 998, Records: records}
	probe := Replicate{Log: LogRef{Kind: 2, Tenant: []byte("acme"), Namespace: []byte("prod"), Name: []byte("sessions"), Shard: 0,
		Part: []byte("cursor:billing")}, Generation: 4, First: 12, PrevGen: 4, Commit: 12}
	ack := ReplicateAck{Status: ReplicateAppended, FenceGen: 4, LogEnd: 1004, LastGen: 4, Durable: 1004}
	mismatch := ReplicateAck{Status: ReplicateMismatch, FenceGen: 4, LogEnd: 990, LastGen: 3, Durable: 990}
	fence := Fence{Log: gLog, Generation: 5, Epoch: 77}
	fenceOK := FenceOK{Generation: 5, Epoch: 77, LogEnd: 1004, LastGen: 4, Durable: 1002, Flags: FenceClean, DiskID: []byte("d-1f2e")}
	genEnd := GenerationEnd{Log: gLog, LeaderGen: 5, Asked: 3}
	genEndOK := GenerationEndOK{LeaderGen: 5, End: 990}
	hb := Heartbeat{Seq: 9, Broker: []byte("broker-2"), DiskID: []byte("d-1f2e"), Reports: []HeartbeatReport{
		{Log: gLog, Generation: 5, Leading: true, LogEnd: 1004, LastGen: 5, Durable: 1004, LeaderHeard: 0},
		{Log: fence.Log, Generation: 4, LogEnd: 17, LastGen: 4, Durable: 16, LeaderHeard: 250_000_000},
	}}
	grant := LeaseGrant{HeartbeatSeq: 9, Epoch: 77, LeaseNanos: 4_000_000_000, Logs: []GrantedLog{{Log: gLog, Generation: 5}}}
	logRead := LogRead{Log: LogRef{Kind: 1, Tenant: []byte("acme"), Namespace: []byte("prod"), Name: []byte("orders"), Shard: 2,
		Part: []byte("group-cursors")}, From: 40, MaxBytes: 256 << 10}
	return []goldenCase{
		{"replicate", "a leader ships 4 bytes of framed records at 1000 (gen 4, after gen 3), commit 998",
			AppendReplicate(nil, 1, rep), &rep},
		{"replicate_probe", "an empty REPLICATE: a probe of a cache's cursor log", AppendReplicate(nil, 2, probe), &probe},
		{"replicate_ack", "appended: durable through 1003", AppendReplicateAck(nil, 1, ack), &ack},
		{"replicate_ack_mismatch", "the batch does not continue the log: it ends at 990 in gen 3", AppendReplicateAck(nil, 1, mismatch), &mismatch},
		{"fence", "the control plane of epoch 77 fences shard 2 at generation 5", AppendFence(nil, 3, fence), &fence},
		{"fence_ok", "a clean replica's real log end after the fence is durable", AppendFenceOK(nil, 3, fenceOK), &fenceOK},
		{"generation_end", "where does the leader's log end for generation 3?", AppendGenerationEnd(nil, 4, genEnd), &genEnd},
		{"generation_end_ok", "", AppendGenerationEndOK(nil, 4, genEndOK), &genEndOK},
		{"heartbeat", "broker-2 leads one shard and follows another", AppendHeartbeat(nil, 5, hb), &hb},
		{"lease_grant", "a lease of 4 s for the shard it leads", AppendLeaseGrant(nil, 5, grant), &grant},
		{"log_read", "a new leader of a group cursor log asks a replica for its records from 40", AppendLogRead(nil, 6, logRead), &logRead},
	}
}
