package cache

import (
	"fmt"
	"testing"
	"time"

	"github.com/felixbroker/felix/segment/vfs"
)

// crashState is what a cache must hold after the crash workload, whatever
// the compaction did: every live value at its offset, no deleted or
// expired value, every counter's sum.
type crashState struct {
	values   map[string]Written
	missing  []string
	counters map[string]int64
}

// crashWorkload fills a durable cache with overwrites, deletes, values
// that expire and counters, then closes it, and returns the FS.
func crashWorkload(t *testing.T, clk *clock) (*vfs.MemFS, crashState) {
	mem := vfs.NewMem()
	s, c := newCache(t, mem, clk, Config{Durable: true})
	st := crashState{values: map[string]Written{}, counters: map[string]int64{}}
	for i := range 120 {
		k := fmt.Sprintf("k%d", i%12)
		st.values[k] = put(t, c, k, fmt.Sprintf("v%d-%040d", i, i), PutOptions{})
		n := fmt.Sprintf("n%d", i%5)
		if _, err := c.CounterAdd([]byte(n), int64(i)); err != nil {
			t.Fatal(err)
		}
		st.counters[n] += int64(i)
	}
	for _, k := range []string{"k0", "k1"} {
		if _, err := c.Delete([]byte(k), Condition{}); err != nil {
			t.Fatal(err)
		}
		delete(st.values, k)
		st.missing = append(st.missing, k)
	}
	for _, k := range []string{"k2", "k3"} {
		put(t, c, k, "expiring", PutOptions{TTL: time.Minute})
		delete(st.values, k)
		st.missing = append(st.missing, k)
	}
	for i := range 30 { // seal the segments holding the deletes and expiring values
		st.values["filler"] = put(t, c, "filler", fmt.Sprintf("%060d", i), PutOptions{})
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Hour)
	return mem, st
}

func checkCrashState(t *testing.T, c *Cache, st crashState, what string) {
	t.Helper()
	for k, w := range st.values {
		if it := get(t, c, k); !it.Found || it.Offset != w.Offset {
			t.Fatalf("%s: %s = %+v, want the value written at %d", what, k, it, w.Offset)
		}
	}
	for _, k := range st.missing {
		if it := get(t, c, k); it.Found {
			t.Fatalf("%s: %s came back: %q at %d", what, k, it.Value, it.Offset)
		}
	}
	for n, sum := range st.counters {
		if v, err := c.CounterGet([]byte(n)); err != nil || !v.Exists || v.Sum != sum {
			t.Fatalf("%s: counter %s = %+v (%v), want %d", what, n, v, err, sum)
		}
	}
}

// The crash windows of a compaction, like rollover's: a crash after any
// mutation a cache compaction makes (the values' and the counters') leaves
// a cache that opens, loses no live value or sum, and brings back no value
// compaction dropped; opening it again finds nothing more to repair.
func TestACrashAtAnyStepOfACompactionLosesNoLiveValue(t *testing.T) {
	clk := newClock()
	probe, st := crashWorkload(t, clk)
	s := openStore(t, testOptions(probe, clk))
	before := probe.MutationCount()
	if _, err := mustCache(t, s).Compact(); err != nil {
		t.Fatal(err)
	}
	steps := probe.MutationCount() - before
	s.Close()
	if steps < 20 {
		t.Fatalf("the compaction made only %d mutations", steps)
	}
	for step := 1; step <= steps; step++ {
		for _, mode := range []vfs.CrashMode{vfs.DropUnsynced, vfs.TearLastWrite(25)} {
			clk := newClock()
			mem, _ := crashWorkload(t, clk)
			s := openStore(t, testOptions(mem, clk))
			mem.SetCrashAfter(step, mode)
			mustCache(t, s).Compact()
			s.Close()
			if !mem.Crashed() {
				t.Fatalf("step %d: no crash", step)
			}
			what := fmt.Sprintf("crash after compaction mutation %d of %d (%v)", step, steps, mode)
			img := mem.CrashImage()
			s2, err := Open(testOptions(img, clk))
			if err != nil {
				t.Fatalf("%s: does not open: %v", what, err)
			}
			checkCrashState(t, mustCache(t, s2), st, what)
			s2.Close()
			s3 := openStore(t, testOptions(img, clk))
			checkCrashState(t, mustCache(t, s3), st, what+", opened again")
			s3.Close()
		}
	}
}
