package cache

import (
	"testing"

	"github.com/felixbroker/felix/segment/vfs"
)

// Every operation is counted once, and a get counts as a hit only when it
// finds a live value.
func TestOpStatsCountEachOperation(t *testing.T) {
	s, c := newCache(t, vfs.NewMem(), nil, Config{Shards: 2, Durable: true})
	defer s.Close()
	put(t, c, "a", "1", PutOptions{})
	get(t, c, "a")
	get(t, c, "missing")
	if _, err := c.Delete([]byte("a"), Condition{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CounterAdd([]byte("n"), 2); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CounterGet([]byte("n")); err != nil {
		t.Fatal(err)
	}
	st := s.OpStats()
	want := [opCount]uint64{OpGet: 2, OpPut: 1, OpDelete: 1, OpCounterAdd: 1, OpCounterGet: 1}
	if st.Calls != want || st.Hits != 1 {
		t.Fatalf("op stats %+v, want calls %v and 1 hit", st, want)
	}
}
