package check

// Options say what a run allows.
type Options struct {
	// Absent reports an offset of a shard that may hold no record a
	// subscription is owed and the final log may lack: retention or
	// compaction took it. Nil: none. Offsets nobody saw holding a record
	// (control records among them) need not be declared.
	Absent func(s Shard, offset uint64) bool
	// ReusedValues: a value may be published more than once, so one value at
	// two offsets (Duplicate) is not an anomaly.
	ReusedValues bool
}

// Check runs every check over h and reports what it found. It does not
// modify h.
func Check(h History, o Options) Report {
	var r Report
	r.Stats.Ops = len(h.Ops)
	checkQueues(&r, h.Ops, o)
	checkAcks(&r, h.Acks)
	checkAcksAfterPromotions(&r, h.Acks, h.Promotions)
	for _, l := range h.Logs {
		checkReplicaLogs(&r, l)
		checkRolledBack(&r, h.Ops, l, o)
	}
	checkLinearizable(&r, h.Ops)
	return r
}
