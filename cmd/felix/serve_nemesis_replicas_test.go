//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/felixbroker/felix/check"
	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/segment"
)

// The end of a nemesis run (issue 16): every broker's copy of every
// replicated log of the run (the stream's shard, and each cache shard's
// values and counters logs) is read from its data directory, read-only,
// once the brokers are stopped, and recorded as check.ShardLogs, so the
// history checker's replica-divergence check (two replicas holding
// different records at an offset below the quorum watermark) and its
// rolled-back-read check (a record read at an offset the stream's final
// log holds something else at) judge them with the rest of the run.
//
// The watermark: a broker keeps its shards' commit watermark in memory
// only, so the one used is what the clients saw acknowledged: one past
// the highest offset a write to the log was acknowledged at (at Quorum
// that offset, and every one below it, is on a majority). Before the stop,
// every broker is running (one killed in the last round is started
// again), all three name one leader, and each replica's log is waited for
// until it holds that offset (replicaCatchUpMax at most): a follower that
// was down or cut off may still hold a suffix of an old leader's that
// was never committed, which its catch-up truncates, and which is no
// divergence.

// replicaCatchUpMax bounds the wait for every replica to hold its log's
// watermark before the brokers are stopped.
const replicaCatchUpMax = 30 * time.Second

// replicatedLog is one replicated log of the run, as every broker's data
// directory lays it out.
type replicatedLog struct {
	shard     check.Shard
	dir       string // under a broker's data directory
	watermark uint64 // one past the highest offset acknowledged to a client
	final     bool   // the stream's: its leader's copy is the final log
}

// streamShardDir is shard 0 of s's log under a data directory
// (engine/names.go).
func streamShardDir(s client.Stream) string {
	return filepath.Join("streams", s.Tenant, s.Namespace, s.Name, "shard-0000")
}

// cacheLogDir is a cache shard's values or counters log under a data
// directory (engine/cache/doc.go, "Storage").
func cacheLogDir(n client.CacheName, shard int, counters bool) string {
	log := "values"
	if counters {
		log = "counters"
	}
	return filepath.Join("caches", n.Tenant, n.Namespace, n.Name, fmt.Sprintf("shard-%04d", shard), log)
}

// replicatedLogs are the run's logs with their watermarks.
func (c *nemesisCluster) replicatedLogs(h *history, s client.Stream) []replicatedLog {
	var top uint64
	acked := false
	for _, a := range h.snapshot() {
		if a.err == nil {
			top, acked = max(top, uint64(a.pos.Offset)), true
		}
	}
	logs := []replicatedLog{{shard: checkShard0(s), dir: streamShardDir(s), final: true}}
	if acked {
		logs[0].watermark = top + 1
	}
	if c.load == nil {
		return logs
	}
	offsets := c.load.ackedOffsets()
	for shard := range nemesisCacheShards {
		for _, counters := range []bool{false, true} {
			l := replicatedLog{shard: check.Shard{Stream: cacheLogName(c.load.name, counters), Index: uint32(shard)},
				dir: cacheLogDir(c.load.name, shard, counters)}
			if o, ok := offsets[logKey{shard, counters}]; ok {
				l.watermark = uint64(o) + 1
			}
			logs = append(logs, l)
		}
	}
	return logs
}

// cacheLogName names a cache's values or counters logs for the checker.
func cacheLogName(n client.CacheName, counters bool) string {
	if counters {
		return "cache " + n.String() + " counters"
	}
	return "cache " + n.String() + " values"
}

// checkReplicas ends the run: it stops the cache load, brings every
// broker up and the three to one leader, waits for each replica to hold
// its log's watermark, stops the brokers (SIGTERM, exit 0), reads their
// logs and has the history checker judge the whole run with them. The
// test fails with the checker's report unless it is valid.
func (c *nemesisCluster) checkReplicas(ctx context.Context, h *history, s client.Stream) {
	c.t.Helper()
	t := c.t
	if c.load != nil {
		c.load.end()
		last, all := c.load.endEpoch()
		t.Logf("the cache operations after the last round: %s; the run's: %s", last, all)
	}
	names := []string{"a", "b", "c"}
	for _, n := range names {
		if st := c.stateOf(n); st == procKilled || st == procStopped {
			c.restart(n)
		}
	}
	leader, _ := c.awaitSettledLeader(ctx, s)
	logs := c.replicatedLogs(h, s)
	c.awaitReplicasHold(ctx, logs, names)
	c.stopAll(names)
	var figures []string
	for _, l := range logs {
		sl := check.ShardLogs{Shard: l.shard, Watermark: l.watermark}
		held := []string{}
		for _, n := range names {
			entries, err := readReplicaLog(filepath.Join(c.proc(n).dataDir, l.dir))
			if err != nil {
				t.Fatalf("%s's copy of %s: %v", n, l.shard, err)
			}
			sl.Replicas = append(sl.Replicas, check.ReplicaLog{Broker: n, Entries: entries})
			if l.final && n == leader {
				sl.Final = entries
			}
			held = append(held, fmt.Sprintf("%s %d", n, len(entries)))
		}
		h.rec.Logs(sl)
		figures = append(figures, fmt.Sprintf("%s watermark %d, records held: %s", l.shard, l.watermark, strings.Join(held, ", ")))
	}
	acks, promotions := c.feedJournals(h, true)
	c.checkJournaled(h, s)
	r := check.Check(h.finalHistory(), check.Options{})
	if !r.Valid() {
		t.Fatalf("the replicas' logs (%s), the history checker: %s", strings.Join(figures, "; "), &r)
	}
	if r.Stats.Acks == 0 {
		t.Fatalf("the brokers' ack journals held no acknowledgement over a run of %d acknowledged publishes: the journals are not wired", r.Stats.Acknowledged)
	}
	t.Logf("the replicas' logs: %s; the brokers' journals at the end: %d acks and %d promotions more, %d last lines torn; the run's acks by log: %s; the history checker: %s",
		strings.Join(figures, "; "), acks, promotions, c.journals.torn, c.journals.figures(), r.Summary())
}

// stopAll stops the brokers as the run's cleanup would (SIGTERM to
// each, then each must exit 0), and ends the test unless they did.
func (c *nemesisCluster) stopAll(names []string) {
	c.t.Helper()
	var procs []*serveProcess
	for _, n := range names {
		procs = append(procs, c.proc(n))
	}
	stopServeProcesses(c.t, procs)
	c.mu.Lock()
	for _, n := range names {
		c.state[n] = procStopped
	}
	c.mu.Unlock()
	if c.t.Failed() {
		c.t.FailNow()
	}
}

func (c *nemesisCluster) stateOf(name string) procState {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state[name]
}

// awaitReplicasHold polls every broker's copy of every log (read-only,
// while the brokers run) until each holds an offset at or past the log's
// watermark less one, for replicaCatchUpMax at most; past that it says
// which did not and returns: the checker judges what they hold.
func (c *nemesisCluster) awaitReplicasHold(ctx context.Context, logs []replicatedLog, names []string) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	deadline := time.NewTimer(replicaCatchUpMax)
	defer deadline.Stop()
	for {
		var behind []string
		for _, l := range logs {
			for _, n := range names {
				if l.watermark == 0 {
					continue
				}
				entries, err := readReplicaLog(filepath.Join(c.proc(n).dataDir, l.dir))
				if err != nil || len(entries) == 0 || entries[len(entries)-1].Offset+1 < l.watermark {
					behind = append(behind, fmt.Sprintf("%s's %s (%d records, %v)", n, l.shard, len(entries), err))
				}
			}
		}
		if len(behind) == 0 {
			return
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			c.t.Logf("after %v, replicas still short of their watermark: %s", replicaCatchUpMax, strings.Join(behind, "; "))
			return
		case <-ctx.Done():
			c.t.Fatalf("replicas short of their watermark when the run's time ran out: %s", strings.Join(behind, "; "))
		}
	}
}

// readReplicaLog reads one replica's log from its directory, read-only
// (as `felix log dump` does: no lock, no repair; the last segment is
// scanned as active, so a torn tail ends it), as the checker's entries in
// offset order. A directory that does not exist, or holds no segment, is
// a replica that holds nothing.
func readReplicaLog(dir string) ([]check.LogEntry, error) {
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	segs, err := listSegments(dir)
	if err != nil {
		if strings.HasPrefix(err.Error(), "no segments") {
			return nil, nil
		}
		return nil, err
	}
	var out []check.LogEntry
	for i, sf := range segs {
		_, err := scanFile(sf, i == len(segs)-1, func(_ int64, r *segment.Record) error {
			out = append(out, check.LogEntry{Offset: uint64(r.Offset), Generation: uint64(r.Generation), Hash: logEntryHash(r)})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// logEntryHash is the hash the checker compares replicas by: of the value
// alone for a record a subscription delivers (no key, no flags: what the
// nemesis publishes, so that it matches check.HashValue of a value read),
// and of its flags, key and value for any other (a cache's put, delete or
// counter add, a control record).
func logEntryHash(r *segment.Record) uint64 {
	if r.Flags == 0 && len(r.Key) == 0 {
		return check.HashValue(string(r.Value))
	}
	return check.HashValue(fmt.Sprintf("%d\x00%s\x00%s", r.Flags, r.Key, r.Value))
}

// A replica's log is read from its directory as the checker's entries,
// every record at its offset and generation, hashed with its key; a
// directory that is not there is a replica holding nothing.
func TestAReplicaLogIsReadFromItsDirectory(t *testing.T) {
	dir := writeLog(t, 100) // k<i> = "value <i>", generation 1, over several segments
	entries, err := readReplicaLog(dir)
	if err != nil || len(entries) != 100 {
		t.Fatalf("%d entries: %v", len(entries), err)
	}
	for i, e := range entries {
		want := logEntryHash(&segment.Record{Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, "value %d", i)})
		if e.Offset != uint64(i) || e.Generation != 1 || e.Hash != want {
			t.Fatalf("entry %d: %+v, want offset %d generation 1 hash %x", i, e, i, want)
		}
	}
	if got := logEntryHash(&segment.Record{Value: []byte("v")}); got != check.HashValue("v") {
		t.Fatalf("a record with no key or flags hashes as %x, want check.HashValue of its value, %x", got, check.HashValue("v"))
	}
	if entries, err := readReplicaLog(filepath.Join(dir, "absent")); err != nil || entries != nil {
		t.Fatalf("an absent directory: %v, %v; want nothing held", entries, err)
	}
}
