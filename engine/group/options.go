package group

import (
	"log/slog"
	"time"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/shardlog"
)

// Defaults for the zero fields of Options, and the limits on requests.
const (
	DefaultVisibility       = 30 * time.Second
	DefaultMaxDeliveries    = 5
	DefaultWindowRecords    = 1 << 16
	DefaultPollBytes        = 1 << 20
	DefaultOwnershipRecheck = 250 * time.Millisecond
	DefaultCompactRecords   = 1 << 14
	DefaultGroupsMax        = 1024
	DefaultLogSegmentBytes  = 1 << 20

	PollRecordsMax = 10_000           // records one Poll may ask for
	VisibilityMax  = 12 * time.Hour   // longest claim or extension
	NackDelayMax   = 12 * time.Hour   // longest redelivery delay
	WaitMax        = 10 * time.Minute // longest long poll
	DetailBytesMax = 512              // a dead letter's reason text
	consumersKept  = 1024             // consumer names remembered without claims
)

// Options configure a Manager.
type Options struct {
	// Visibility is how long a claim stands before the record is owed
	// again, unless a poll asks for another.
	Visibility time.Duration
	// MaxDeliveries: a record delivered this many times whose claim then
	// lapses, or that is nacked, is dead-lettered instead of delivered
	// again. Negative: never.
	MaxDeliveries int
	// WindowRecords bounds how far past its cursor a group hands records
	// out: a record nobody finishes holds the group's new deliveries to
	// this many.
	WindowRecords int
	// PollBytes bounds the records of one poll (one is always allowed).
	PollBytes int
	// OwnershipRecheck is how often a waiting poll asks Ownership again.
	OwnershipRecheck time.Duration
	// CompactRecords: a group log is compacted once this many records were
	// appended to it since the last compaction.
	CompactRecords int
	// GroupsMax bounds the groups of one shard.
	GroupsMax int
	// Fsync is the FsyncMode of the group logs; default OnCommit, so a
	// dead letter is on disk before the cursor passes its record.
	Fsync *shardlog.FsyncMode
	// LogSegmentBytes is the segment size of the group logs.
	LogSegmentBytes int64
	// Replication replicates the group logs of a stream shard whose
	// replication factor is above 1 (engine/replication_part.go); nil on
	// a broker alone, which holds every shard's only replica.
	Replication engine.PartReplication
	// DeadLetterMaxAge is how long a dead letter is kept: one older is
	// dropped (no longer listed or redriven; its log record goes at the
	// next compaction). 0: kept until redriven.
	DeadLetterMaxAge time.Duration

	Clock  Clock
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.Visibility <= 0 {
		o.Visibility = DefaultVisibility
	}
	o.Visibility = min(o.Visibility, VisibilityMax)
	if o.MaxDeliveries == 0 {
		o.MaxDeliveries = DefaultMaxDeliveries
	}
	if o.WindowRecords <= 0 {
		o.WindowRecords = DefaultWindowRecords
	}
	if o.PollBytes <= 0 {
		o.PollBytes = DefaultPollBytes
	}
	if o.OwnershipRecheck <= 0 {
		o.OwnershipRecheck = DefaultOwnershipRecheck
	}
	if o.CompactRecords <= 0 {
		o.CompactRecords = DefaultCompactRecords
	}
	if o.GroupsMax <= 0 {
		o.GroupsMax = DefaultGroupsMax
	}
	if o.Fsync == nil {
		m := shardlog.OnCommit()
		o.Fsync = &m
	}
	if o.LogSegmentBytes <= 0 {
		o.LogSegmentBytes = DefaultLogSegmentBytes
	}
	if o.Clock == nil {
		o.Clock = RealClock{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}
