package shardlog

import (
	"testing"

	"github.com/felixbroker/felix/segment/vfs"
)

var tears = []vfs.CrashMode{vfs.TearLastWrite(1), vfs.TearLastWrite(20), vfs.TearLastWrite(45), vfs.TearLastWrite(300)}

// writeBacks are page-cache crashes: some unsynced sectors of every file
// written back, in no order, the rest lost.
var writeBacks = []vfs.CrashMode{vfs.WriteBackSome(1), vfs.WriteBackSome(2), vfs.WriteBackSome(3)}

// Crash after each mutating FS operation of a mixed workload that rolls
// over: no OnCommit-acknowledged record is lost, whether the crash drops
// every unsynced byte or tears the last write.
func TestACrashAfterAnyMutationLosesNoCommittedRecord(t *testing.T) {
	sweep(t, crashConfig{mode: OnCommit(), writers: 2, records: 40, tears: append(tears[:4:4], writeBacks[0])})
}

func TestACrashAfterAnyMutationWithoutRolloverLosesNoCommittedRecord(t *testing.T) {
	cfg := crashConfig{mode: OnCommit(), writers: 1, records: 25, tears: tears}
	sweep(t, cfg)
}

// Under None and Periodic a crash may lose acknowledged records, but what
// survives is always a gapless, byte-exact prefix and always opens: also
// when the page cache wrote back some of several segments' unsynced
// sectors and not others (retired segments wait for their seal there).
func TestACrashUnderNoneOrPeriodicLeavesAValidPrefix(t *testing.T) {
	sweep(t, crashConfig{mode: None(), writers: 2, records: 30, tears: append(tears[:2:2], writeBacks...)})
	sweep(t, crashConfig{mode: Periodic(0), writers: 1, records: 30, tears: append(tears[2:4:4], writeBacks[0])})
}

// The contract's test: a crash while the next segment is being prepared in
// the background, or while the rollover takes it, leaves the log openable
// and loses nothing committed.
func TestACrashWhilePreparingARolloverLeavesTheLogOpenable(t *testing.T) {
	sweep(t, crashConfig{mode: OnCommit(), prepare: true, writers: 1, records: 60, tears: tears[:2]})
}
