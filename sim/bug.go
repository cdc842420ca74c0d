package sim

// Bug is a defect a run injects on purpose, to show the simulator and its
// checker catch it (sim_test.go). BugNone in every real run.
type Bug int

const (
	BugNone Bug = iota
	// BugAckBeforeQuorum acknowledges a publish to its client as soon as
	// the leader has appended it locally, before any replica or fsync
	// has it: what a leader that skipped its quorum would do.
	BugAckBeforeQuorum
	// BugReadPastCommit reads a shard from its leader's local log up to
	// its end, past the commit watermark: what a leader that handed its
	// subscribers records before a quorum had them would do.
	BugReadPastCommit
	// BugCacheLeaderAcks opens every cache at the Leader level while the
	// control plane and the checker take it for what its CacheConfig says:
	// a Quorum cache whose leader acknowledges a write once its own log
	// has it, before any follower does.
	BugCacheLeaderAcks
	// BugStreamLeaderAcks, in an engine run, opens the stream in every
	// broker's engine at the Leader level while the control plane and the
	// checker take it for Quorum: its leader acknowledges a publish once
	// its own log has it, before any follower does.
	BugStreamLeaderAcks
	// BugLongGrant has the control plane grant leases four times as long
	// as the one it counts before it promotes: a leader cut off or frozen
	// goes on acknowledging after its successor's promotion began.
	BugLongGrant
)
