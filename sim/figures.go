package sim

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// figures sums many runs' results, for docs/reliability.md.
type figures struct {
	seeds, failed          int
	faults                 map[string]int
	ops, publishes, acked  int
	reads, acks, delivered int
	promotions             int
	replacements           int
	anomalies, tolerated   map[string]int
	unavailable            int
	shards                 map[string]int // by class
	// The caches': operations recorded, those answered, the keys checked
	// for linearizability, and the caches by class.
	cacheOps, cacheOk, cacheKeys int
	caches                       map[string]int
	// The engine runs': how many, the operations checked on their
	// shards (publishes and reads through the engine), the subscriptions
	// their subscribers made and the records those delivered.
	engineSeeds, engineOps, enginePublishes, engineAcked, engineReads int
	subscriptions, subRecords                                         int
	engineAnomalies                                                   map[string]int // by shard class and kind
}

func (f *figures) add(r *Result) {
	if f.faults == nil {
		f.faults, f.anomalies, f.tolerated, f.shards = map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}
		f.caches, f.engineAnomalies = map[string]int{}, map[string]int{}
	}
	for _, c := range r.Config.Caches {
		f.caches[c.class()]++
	}
	for _, rep := range r.CacheReports {
		f.cacheKeys += rep.Stats.Partitions
		for k, n := range rep.Counts {
			if n > 0 {
				f.anomalies[kindName(k)] += n
			}
		}
	}
	f.cacheOps += r.Stats.CacheOps
	f.cacheOk += r.Stats.CacheOk
	for _, s := range r.Config.Shards {
		f.shards[shardClass(s)]++
	}
	f.seeds++
	if r.Failed() {
		f.failed++
	}
	for k, n := range r.Stats.Faults {
		f.faults[k] += n
	}
	if r.Config.Engine {
		f.engineSeeds++
		f.subscriptions += r.Stats.Subscriptions
		f.subRecords += r.Stats.SubRecords
		for i, rep := range r.Reports {
			f.engineOps += rep.Stats.Ops
			f.enginePublishes += rep.Stats.Publishes
			f.engineAcked += rep.Stats.Acknowledged
			f.engineReads += rep.Stats.Reads
			for k, n := range rep.Counts {
				if n > 0 {
					f.engineAnomalies[shardClass(r.Config.Shards[i])+" "+kindName(k)] += n
				}
			}
		}
	}
	for _, rep := range r.Reports {
		f.ops += rep.Stats.Ops
		f.publishes += rep.Stats.Publishes
		f.acked += rep.Stats.Acknowledged
		f.reads += rep.Stats.Reads
		f.acks += rep.Stats.Acks
		f.promotions += rep.Stats.Promotions
		for k, n := range rep.Counts {
			if n > 0 {
				f.anomalies[kindName(k)] += n
			}
		}
	}
	for k, n := range r.Tolerated {
		f.tolerated[k] += n
	}
	f.delivered += r.Stats.Delivered
	f.unavailable += r.Stats.FinalUnavailable
	f.replacements += r.Stats.Replacements
}

func (f *figures) String() string {
	return fmt.Sprintf("%d seeds, %d failed; shards %s; caches %s; faults %s; %d ops checked (%d publishes, %d acknowledged, %d reads), %d broker acks, %d promotions (%d of them replacing a disk), %d messages delivered; through the engine: %d seeds, %d ops (%d publishes, %d acknowledged, %d reads), %d subscriptions delivering %d records, anomalies %s; %d cache and counter ops checked (%d answered, %d keys checked for linearizability); anomalies %s (of which tolerated by a Leader or Periodic shard's or cache's contract: %s); %d shards with no serving leader at the end",
		f.seeds, f.failed, sorted(f.shards), sorted(f.caches), sorted(f.faults), f.ops, f.publishes, f.acked, f.reads, f.acks, f.promotions, f.replacements, f.delivered,
		f.engineSeeds, f.engineOps, f.enginePublishes, f.engineAcked, f.engineReads, f.subscriptions, f.subRecords, sorted(f.engineAnomalies),
		f.cacheOps, f.cacheOk, f.cacheKeys, sorted(f.anomalies), sorted(f.tolerated), f.unavailable)
}

func sorted(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(out, ", ")
}
