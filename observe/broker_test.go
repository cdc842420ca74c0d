package observe

import (
	"bufio"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/cache"
	"github.com/felixbroker/felix/engine/group"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment/vfs"
)

// requiredFamilies are the metrics the operations guide promises.
var requiredFamilies = []string{
	"felix_build_info", "felix_io_path", "felix_streams",
	"felix_log_appended_records_total", "felix_log_appended_bytes_total",
	"felix_log_fsyncs_total", "felix_log_fsync_duration_seconds", "felix_log_group_commit_records",
	"felix_log_unsynced_bytes", "felix_log_segments",
	"felix_log_recovery_duration_seconds", "felix_log_recovery_truncated_bytes",
	"felix_log_verify_pending_segments", "felix_log_verified_bytes", "felix_log_offline_shards",
	"felix_publish_requests_total", "felix_publish_ack_duration_seconds",
	"felix_subscribers", "felix_subscriber_dropped_records_total",
	"felix_connections", "felix_outbound_buffered_bytes",
	"felix_connections_refused_total", "felix_connections_shed_total", "felix_frame_timeouts_total", "felix_inbound_buffered_bytes",
	"felix_cache_operations_total", "felix_cache_keys",
	"felix_group_lag_records", "felix_group_dead_letters",
}

// scrapeBroker runs a broker's engine, caches and groups in memory, does a
// little of everything, and returns the exposition.
func scrapeBroker(t *testing.T) string {
	t.Helper()
	r := NewRegistry()
	fs := vfs.NewMem()
	e, err := engine.Open(engine.Options{FS: fs, Dir: "/data", Fsync: shardlog.OnCommit(), Observer: NewLogObserver(r)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	caches, err := cache.Open(cache.Options{FS: fs, Dir: "/data", Fsync: shardlog.OnCommit(), CompactEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer caches.Close()
	groups := group.New(e, group.Options{})
	defer groups.Close()
	net := NewNetMetrics(r)
	RegisterBroker(r, Broker{Version: "test", IOPath: "portable", Engine: e, Net: net, Caches: caches, Groups: groups})

	id := engine.StreamID{Tenant: "acme", Namespace: "orders", Name: "created"}
	if _, err := e.CreateStream(id, engine.StreamConfig{Durable: true}); err != nil {
		t.Fatal(err)
	}
	st, _ := e.Stream(id)
	for range 3 {
		publishWait(t, st)
	}
	net.ObserveAck(time.Millisecond)
	k := group.Key{Stream: id, Group: "billing"}
	if err := groups.Create(k, engine.StartEarliest, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := groups.Poll(context.Background(), group.PollRequest{Key: k, Consumer: "c1", Max: 1}); err != nil {
		t.Fatal(err)
	}
	cid := cache.ID{Tenant: "acme", Namespace: "app", Name: "sessions"}
	if _, err := caches.Create(cid, cache.Config{Durable: true}); err != nil {
		t.Fatal(err)
	}
	c, _ := caches.Cache(cid)
	if _, err := c.Put([]byte("k"), []byte("v"), cache.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := r.WritePrometheus(&out); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

type ackWaiter chan error

func (w ackWaiter) Published(_ []engine.AckRun, err error) { w <- err }

func publishWait(t *testing.T, st *engine.Stream) {
	t.Helper()
	w := make(ackWaiter, 1)
	if err := st.Publish([]engine.Record{{Value: []byte("v")}}, w); err != nil {
		t.Fatal(err)
	}
	if err := <-w; err != nil {
		t.Fatal(err)
	}
}

// Every family the operations guide lists is exposed, with the values a
// little work leaves behind.
func TestTheBrokerExposesEveryFamily(t *testing.T) {
	text := scrapeBroker(t)
	fams := parseExposition(t, text)
	for _, name := range requiredFamilies {
		if _, ok := fams[name]; !ok {
			t.Errorf("family %s missing", name)
		}
	}
	for series, want := range map[string]float64{
		"felix_log_appended_records_total":         3,
		`felix_publish_ack_duration_seconds_count`: 1,
		`felix_cache_operations_total{op="put"}`:   1,
		`felix_cache_keys`:                         1,
		`felix_group_lag_records{stream="acme/orders/created",shard="0",group="billing"}`: 3,
		`felix_io_path{path="portable"}`:       1,
		"felix_log_group_commit_records_count": 3,
	} {
		if got, ok := seriesValue(text, series); !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", series, got, ok, want)
		}
	}
	if got, _ := seriesValue(text, "felix_log_fsyncs_total"); got < 3 {
		t.Errorf("felix_log_fsyncs_total = %v after 3 OnCommit publishes", got)
	}
}

// The exposition follows the Prometheus conventions promlint checks: help
// and type on every family, base units, _total on counters only, histogram
// buckets cumulative up to +Inf = _count, no series twice.
func TestTheExpositionFollowsTheNamingConventions(t *testing.T) {
	text := scrapeBroker(t)
	fams := parseExposition(t, text)
	badUnit := regexp.MustCompile(`_(ms|us|ns|milliseconds|microseconds|nanoseconds|minutes|hours|kb|mb|gb|kib|mib|gib|percent)(_|$)`)
	for name, f := range fams {
		switch {
		case !strings.HasPrefix(name, "felix_"):
			t.Errorf("%s: not felix_-prefixed", name)
		case f.help == "":
			t.Errorf("%s: no help", name)
		case (f.typ == "counter") != strings.HasSuffix(name, "_total"):
			t.Errorf("%s: a %s; only counters end in _total, and every counter does", name, f.typ)
		case badUnit.MatchString(name):
			t.Errorf("%s: use base units (seconds, bytes)", name)
		case name == "felix_broker_replication_lag_records":
			t.Errorf("%s is reserved for the cluster layer", name)
		}
		if f.typ == "histogram" {
			checkHistogram(t, name, f.samples)
		}
	}
}

type parsedFamily struct {
	help, typ string
	samples   []string // series lines
}

var sampleLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$`)

func parseExposition(t *testing.T, text string) map[string]*parsedFamily {
	t.Helper()
	fams := map[string]*parsedFamily{}
	seen := map[string]bool{}
	var cur string
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "# HELP "); ok {
			name, help, _ := strings.Cut(rest, " ")
			if fams[name] != nil {
				t.Fatalf("family %s described twice", name)
			}
			fams[name], cur = &parsedFamily{help: help}, name
			continue
		}
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name, typ, _ := strings.Cut(rest, " ")
			if name != cur {
				t.Fatalf("TYPE of %s does not follow its HELP", name)
			}
			fams[name].typ = typ
			continue
		}
		m := sampleLine.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("malformed line %q", line)
		}
		if _, err := strconv.ParseFloat(m[3], 64); err != nil {
			t.Fatalf("line %q: value: %v", line, err)
		}
		if !strings.HasPrefix(m[1], cur) || cur == "" {
			t.Fatalf("series %q outside its family (current %q)", line, cur)
		}
		if series := m[1] + m[2]; seen[series] {
			t.Fatalf("series %s twice", series)
		} else {
			seen[series] = true
		}
		fams[cur].samples = append(fams[cur].samples, line)
	}
	return fams
}

func checkHistogram(t *testing.T, name string, lines []string) {
	t.Helper()
	var counts []float64
	var les []string
	var total float64
	for _, l := range lines {
		m := sampleLine.FindStringSubmatch(l)
		v, _ := strconv.ParseFloat(m[3], 64)
		switch m[1] {
		case name + "_bucket":
			counts, les = append(counts, v), append(les, m[2])
		case name + "_count":
			total = v
		}
	}
	if len(les) == 0 || !strings.Contains(les[len(les)-1], `le="+Inf"`) {
		t.Errorf("%s: no +Inf bucket", name)
		return
	}
	if !slices.IsSorted(counts) || counts[len(counts)-1] != total {
		t.Errorf("%s: buckets %v not cumulative up to _count %v", name, counts, total)
	}
}

func seriesValue(text, series string) (float64, bool) {
	for _, line := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			v, err := strconv.ParseFloat(rest, 64)
			return v, err == nil
		}
	}
	return 0, false
}

func ExampleRegistry() {
	r := NewRegistry()
	r.GaugeFunc("felix_example_depth", "How deep.", func() float64 { return 2 })
	var b strings.Builder
	_ = r.WritePrometheus(&b)
	fmt.Print(b.String())
	// Output:
	// # HELP felix_example_depth How deep.
	// # TYPE felix_example_depth gauge
	// felix_example_depth 2
}
