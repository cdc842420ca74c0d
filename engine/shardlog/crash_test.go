package shardlog

import (
	"testing"

	"github.com/felixbroker/felix/segment/vfs"
)

var tears = []vfs.CrashMode{vfs.TearLastWrite(1), vfs.TearLastWrite(20), vfs.TearLastWrite(45), vfs.TearLastWrite(300)}

// Crash after each mutating FS operation of a mixed workload that rolls
// over: no OnCommit-acknowledged record is lost, whether the crash drops
// every unsynced byte or tears the last write.
func TestACrashAfterAnyMutationLosesNoCommittedRecord(t *testing.T) {
	sweep(t, crashConfig{mode: OnCommit(), writers: 2, records: 40, tears: tears})
}

func TestACrashAfterAnyMutationWithoutRolloverLosesNoCommittedRecord(t *testing.T) {
	cfg := crashConfig{mode: OnCommit(), writers: 1, records: 25, tears: tears}
	sweep(t, cfg)
}

// Under None and Periodic a crash may lose acknowledged records, but what
// survives is always a gapless, byte-exact prefix and always opens.
func TestACrashUnderNoneOrPeriodicLeavesAValidPrefix(t *testing.T) {
	sweep(t, crashConfig{mode: None(), writers: 2, records: 30, tears: tears[:2]})
	sweep(t, crashConfig{mode: Periodic(0), writers: 1, records: 30, tears: tears[2:]})
}

// The contract's test: a crash while the next segment is being prepared in
// the background, or while the rollover takes it, leaves the log openable
// and loses nothing committed.
func TestACrashWhilePreparingARolloverLeavesTheLogOpenable(t *testing.T) {
	sweep(t, crashConfig{mode: OnCommit(), prepare: true, writers: 1, records: 60, tears: tears[:2]})
}
