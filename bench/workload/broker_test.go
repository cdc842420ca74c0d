package workload

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/felixbroker/felix/broker"

	"github.com/felixbroker/felix/bench"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/netio"
	"github.com/felixbroker/felix/ring"
)

// testLimit bounds every workload a test runs.
const testLimit = time.Minute

// startBroker runs a broker.Broker on a temporary directory and
// 127.0.0.1:0, as `felix bench` does without an address.
func startBroker(t *testing.T) Target {
	t.Helper()
	dir := t.TempDir()
	b, err := broker.Start(broker.Config{DataDir: dir, IO: ring.ModePortable,
		Engine: engine.Options{Fsync: shardlog.Periodic(0), PrepareSegments: true, SegmentBytes: 8 << 20},
		Net:    netio.Config{Addr: "127.0.0.1:0", Multicore: true, EventLoops: 2}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testLimit)
		defer cancel()
		b.Stop(ctx)
	})
	return Target{Addr: b.Addr().String(), DataDir: dir}
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testLimit)
	t.Cleanup(cancel)
	return ctx
}

// tiny is a spec small enough for a test: a fixed count, short baselines.
func tiny(s Spec) Spec {
	s.BaselineDuration = 100 * time.Millisecond
	s.IO = ring.ModePortable
	return s
}

func wantBaselines(t *testing.T, r bench.Result, names ...string) {
	t.Helper()
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		found := false
		for _, b := range r.Baselines {
			if b.Name == n {
				found = true
				if len(b.Ratios) == 0 {
					t.Errorf("%s: baseline %s has no ratio", r.Workload, n)
				}
			}
		}
		if !found {
			t.Errorf("%s: no %s baseline among %d", r.Workload, n, len(r.Baselines))
		}
	}
}

// Pub publishes exactly its count through pipelined async requests and
// sets the TCP and disk baselines beside it.
func TestPubCountsEveryAcknowledgedRecord(t *testing.T) {
	tg := startBroker(t)
	for _, fsync := range []shardlog.FsyncMode{shardlog.None(), shardlog.OnCommit()} {
		s := tiny(Spec{RecordBytes: 256, Batch: 8, Publishers: 3, Connections: 2, Inflight: 4, Count: 8 * 3 * 40, Fsync: fsync})
		r, err := Pub(testContext(t), tg, s, NewBaselines())
		if err != nil {
			t.Fatal(err)
		}
		if r.Records != 960 || r.Bytes != 960*256 || r.Latency.Count != 960 {
			t.Fatalf("%s: %d records, %d bytes, %d latency samples; want 960, 245760, 960", FsyncName(fsync), r.Records, r.Bytes, r.Latency.Count)
		}
		disk := "pagecache"
		if fsync.Kind == shardlog.FsyncOnCommit {
			disk = "groupcommit"
		}
		wantBaselines(t, r, "tcp", disk)
	}
}

// E2E delivers every published record to every subscriber and measures
// each delivery from its stamp.
func TestE2EDeliversEveryRecordToEverySubscriber(t *testing.T) {
	tg := startBroker(t)
	s := tiny(Spec{RecordBytes: 64, Batch: 4, Publishers: 2, Subscribers: 3, Inflight: 2, Count: 400})
	r, err := E2E(testContext(t), tg, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Records != 3*400 || r.Latency.Count != 3*400 || r.Params.Extra["missed"] != "0" {
		t.Fatalf("%d deliveries (%d samples), missed %s; want 1200 and none", r.Records, r.Latency.Count, r.Params.Extra["missed"])
	}
	if r.Latency.Max > testLimit {
		t.Fatalf("a delivery took %v: the stamp was misread", r.Latency.Max)
	}
	wantBaselines(t, r, "tcp", "pagecache")
}

// An open-loop run keeps its rate: the count takes about count/rate.
func TestPubOpenLoopKeepsItsRate(t *testing.T) {
	tg := startBroker(t)
	s := tiny(Spec{RecordBytes: 128, Publishers: 2, Count: 200, Rate: 1000})
	r, err := Pub(testContext(t), tg, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Records != 200 || r.Duration < 190*time.Millisecond {
		t.Fatalf("%d records in %v at 1000/s, want 200 in about 200ms", r.Records, r.Duration)
	}
}

func TestLogAppendsItsCountBesideTheDisk(t *testing.T) {
	dir := t.TempDir()
	s := tiny(Spec{RecordBytes: 512, Batch: 16, Publishers: 4, Inflight: 2, Count: 16 * 4 * 50, Fsync: shardlog.OnCommit()})
	r, err := Log(testContext(t), dir, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Records != 3200 || r.Params.IOPath != "portable" {
		t.Fatalf("%d records via %q", r.Records, r.Params.IOPath)
	}
	wantBaselines(t, r, "groupcommit")
	assertEmpty(t, dir)
}

// The mix does exactly its count of operations, gets and puts in its
// proportion, every get finding a value; each kind beside the TCP
// round trip of its frames, the puts beside the disk too; the cache is
// dropped afterwards.
func TestCacheMixesGetsAndPutsOnABroker(t *testing.T) {
	tg := startBroker(t)
	s := tiny(Spec{RecordBytes: 100, Publishers: 4, Connections: 2, Count: 2000, Fsync: shardlog.OnCommit()})
	rs, err := Cache(testContext(t), tg, s, CacheShape{Keys: 500, GetPercent: 30}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || rs[0].Workload != "cache/get" || rs[1].Workload != "cache/put" {
		t.Fatalf("results %v", names(rs))
	}
	get, put := rs[0], rs[1]
	if get.Records != 600 || put.Records != 1400 || get.Latency.Count != 600 || put.Latency.Count != 1400 {
		t.Fatalf("%d gets (%d samples), %d puts (%d samples); want 600 and 1400", get.Records, get.Latency.Count,
			put.Records, put.Latency.Count)
	}
	if get.Bytes != 600*100 || get.Params.Extra["misses"] != "0" || put.Bytes != 1400*100 {
		t.Fatalf("gets read %d bytes (misses %s), puts wrote %d", get.Bytes, get.Params.Extra["misses"], put.Bytes)
	}
	wantBaselines(t, get, "tcp")
	wantBaselines(t, put, "tcp", "groupcommit")
	for _, r := range rs { // each beside its kind's part of the same mix over bare TCP
		if b := r.Baselines[0]; b.Workload != "tcp/loopback" || b.Params.Extra["gets"] != "30%" || b.Params.Connections != 4 {
			t.Fatalf("%s beside %s %v", r.Workload, b.Workload, b.Params)
		}
	}
	wantNoCaches(t, tg)
}

// A mix of gets only or puts only reports that kind alone.
func TestCacheMixOfOneKind(t *testing.T) {
	tg := startBroker(t)
	for _, percent := range []int{0, 100} {
		s := tiny(Spec{RecordBytes: 64, Publishers: 2, Count: 300, Fsync: shardlog.None()})
		rs, err := Cache(testContext(t), tg, s, CacheShape{Keys: 50, GetPercent: percent}, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := map[int]string{0: "cache/put", 100: "cache/get"}[percent]
		if len(rs) != 1 || rs[0].Workload != want || rs[0].Records != 300 {
			t.Fatalf("%d%% gets: results %v, want %s(300)", percent, names(rs), want)
		}
	}
}

// The same mix in process, beside the bare log; nothing is left in dir.
func TestCacheInProcessBesideTheBareLog(t *testing.T) {
	dir := t.TempDir()
	s := tiny(Spec{RecordBytes: 100, Publishers: 2, Count: 2000, Fsync: shardlog.None()})
	rs, err := CacheInProcess(testContext(t), dir, s, CacheShape{Keys: 300, GetPercent: 50})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || rs[0].Records != 1000 || rs[1].Records != 1000 || rs[0].Bytes != 1000*100 {
		t.Fatalf("results %v, gets read %d bytes", names(rs), rs[0].Bytes)
	}
	wantBaselines(t, rs[0], "log/read")
	wantBaselines(t, rs[1], "log/append")
	assertEmpty(t, dir)
}

func TestCacheShapeLimits(t *testing.T) {
	for _, c := range []CacheShape{{Keys: -1}, {Keys: CacheKeysMax + 1}, {GetPercent: 101}, {GetPercent: -1}} {
		if _, err := Cache(testContext(t), Target{}, Spec{Count: 1}, c, nil); !errors.Is(err, ErrSpec) {
			t.Errorf("%+v: %v, want ErrSpec", c, err)
		}
	}
}

// Each consumer count drains every record once through a fresh group,
// beside one subscription draining the same records; the stream and its
// groups are deleted afterwards.
func TestGroupDrainsEveryRecordOnABroker(t *testing.T) {
	tg := startBroker(t)
	for _, sync := range []bool{false, true} {
		s := tiny(Spec{RecordBytes: 64, Batch: 50, Count: 3000, Fsync: shardlog.None()})
		rs, err := Group(testContext(t), tg, s, GroupShape{Consumers: []int{1, 3}, SyncAck: sync})
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != 2 || rs[0].Params.Subscribers != 1 || rs[1].Params.Subscribers != 3 {
			t.Fatalf("results %v", names(rs))
		}
		for _, r := range rs {
			if r.Records != 3000 || r.Bytes != 3000*64 || r.Params.Extra["acked"] != "3000" || r.Params.Extra["redelivered"] != "0" {
				t.Fatalf("sync %v, %d consumers: %d records, %d bytes, acked %s, redelivered %s", sync, r.Params.Subscribers,
					r.Records, r.Bytes, r.Params.Extra["acked"], r.Params.Extra["redelivered"])
			}
			wantBaselines(t, r, "subscription")
			if b := r.Baselines[0]; b.Workload != "subscription/drain" || b.RecordsPerSec <= 0 {
				t.Fatalf("baseline %+v", b)
			}
		}
	}
	wantNoStreams(t, tg)
}

func TestGroupInProcessDrainsEveryRecord(t *testing.T) {
	dir := t.TempDir()
	s := tiny(Spec{RecordBytes: 64, Batch: 50, Count: 3000, Fsync: shardlog.None()})
	rs, err := GroupInProcess(testContext(t), dir, s, GroupShape{Consumers: []int{3}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].Records != 3000 || rs[0].Params.Extra["acked"] != "3000" {
		t.Fatalf("results %v, acked %s", names(rs), rs[0].Params.Extra["acked"])
	}
	wantBaselines(t, rs[0], "subscription")
	assertEmpty(t, dir)
}

func TestFsyncRunsTheDiskSuite(t *testing.T) {
	rs, err := Fsync(testContext(t), t.TempDir(), tiny(Spec{RecordBytes: 4096, Count: 20}), []int{4})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(names(rs), " ")
	for _, want := range []string{"fdatasync/growing/raw", "fdatasync/prezeroed/portable", "groupcommit/prezeroed/raw", "pagecache/raw"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %s among %s", want, got)
		}
	}
}

// The summary has a row per workload result with its baselines' ratios.
func TestSummaryRowsCarryTheRatios(t *testing.T) {
	tg := startBroker(t)
	r, err := Pub(testContext(t), tg, tiny(Spec{RecordBytes: 128, Count: 50}), nil)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteSummary(&b, []bench.Result{r}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 5 || !strings.Contains(lines[0], "x tcp") || !strings.Contains(lines[0], "x pagecache") ||
		!strings.HasPrefix(lines[2], "| pub | 128B | 1 | periodic | 1 | ") || strings.Count(lines[2], "x |") != 2 {
		t.Fatalf("summary:\n%s", b.String())
	}
}

func names(rs []bench.Result) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Workload+"("+strconv.FormatInt(r.Records, 10)+")")
	}
	return out
}

// A warm-up publishes before the measurement and is not counted in it.
func TestPubWarmupIsNotCounted(t *testing.T) {
	tg := startBroker(t)
	r, err := Pub(testContext(t), tg, tiny(Spec{RecordBytes: 64, Count: 100, Warmup: 100 * time.Millisecond}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Records != 100 || r.Latency.Count != 100 || r.Params.Extra["warmup"] != "100ms" {
		t.Fatalf("%d records, %d samples, warmup %q; want 100, 100, 100ms", r.Records, r.Latency.Count, r.Params.Extra["warmup"])
	}
}
