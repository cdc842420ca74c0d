package workload

import (
	"testing"
	"time"
)

// nopCache answers every get with a value of valueBytes and every put.
type nopCache struct{ valueBytes int }

func (o nopCache) get(int, []byte) (int, bool, error) { return o.valueBytes, true, nil }
func (o nopCache) put(int, []byte, []byte) error      { return nil }

// A mix call allocates nothing of its own (what the backend allocates is
// the backend's), and each worker interleaves the kinds at its share.
func TestTheCacheMixAllocatesNothingAndKeepsItsShare(t *testing.T) {
	s, c, err := cacheSpec(Spec{RecordBytes: 32, Publishers: 2, Count: 1}, CacheShape{GetPercent: 30})
	if err != nil {
		t.Fatal(err)
	}
	m := newCacheMix(s, c, nopCache{valueBytes: 32}, pattern(32))
	allocs := testing.AllocsPerRun(1000, func() {
		if _, err := m.Send(1, time.Now()); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per call", allocs)
	}
	gets, _ := m.gets.Lane(1).Totals()
	puts, _ := m.puts.Lane(1).Totals()
	if gets+puts != 1001 || gets != 300 { // AllocsPerRun calls once more to warm up
		t.Fatalf("%d gets and %d puts of 1001 calls, want 300 gets", gets, puts)
	}
}

func TestKeysAreFixedWidth(t *testing.T) {
	for k, want := range map[int]string{0: "key:0000000000", 42: "key:0000000042", CacheKeysMax - 1: "key:0009999999"} {
		if got := string(appendKey(nil, k)); got != want || len(got) != cacheKeyBytes {
			t.Errorf("key %d: %q, want %q", k, got, want)
		}
	}
}

// The TCP baseline runs the same mix: the same count splits the same way.
func TestTheTCPBaselineRunsTheSameMix(t *testing.T) {
	s, c, err := cacheSpec(Spec{RecordBytes: 512, Publishers: 3, Count: 1000, BaselineDuration: time.Minute},
		CacheShape{GetPercent: 30})
	if err != nil {
		t.Fatal(err)
	}
	base, err := tcpCacheBaselines(testContext(t), s, c)
	if err != nil {
		t.Fatal(err)
	}
	get, put := base[cacheGet], base[cachePut]
	// 1000 calls over 3 workers: 334, 333, 333; 30% of each is 100, 99, 99.
	if get.Records != 298 || put.Records != 702 || get.Bytes != 298*512 || get.Role != "baseline" {
		t.Fatalf("tcp mix: %d gets (%d bytes), %d puts; want 298 and 702", get.Records, get.Bytes, put.Records)
	}
}
