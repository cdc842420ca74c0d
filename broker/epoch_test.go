package broker

import "testing"

func TestEachIncarnationGetsTheNextEpoch(t *testing.T) {
	dir := t.TempDir()
	var prev uint64
	for i := range 3 {
		e, err := nextEpoch(dir)
		if err != nil {
			t.Fatal(err)
		}
		if e == 0 || e >= 1<<32 || (i > 0 && e != prev+1) {
			t.Fatalf("incarnation %d got epoch %d after %d", i, e, prev)
		}
		prev = e
	}
	if e, err := nextEpoch(""); err != nil || e == 0 || e >= 1<<32 {
		t.Fatalf("memory-only epoch %d, %v", e, err)
	}
}
