package cache

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

// A store whose cache cannot open (its rebuild meets a damaged record)
// fails Open with the damage, naming the file, and returns: before, the
// failed Open waited for a compactor it had never started, for ever.
func TestAStoreWhoseCacheCannotOpenFailsOpenAndReturns(t *testing.T) {
	mem := vfs.NewMem()
	s, c := newCache(t, mem, nil, Config{Shards: 1, Durable: true})
	for i := range 200 {
		put(t, c, fmt.Sprintf("k%03d", i), "a value long enough to fill segments", PutOptions{})
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	first := filepath.Join(valuesDir("/data", cid, 0), segment.SegmentName(0))
	f, err := mem.OpenReadWrite(first)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0xff}, segment.HeaderSize+20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	o := testOptions(mem, nil)
	o.TrustIndexes = true
	if _, err := Open(o); !errors.Is(err, segment.ErrCorrupt) {
		t.Fatalf("open over a damaged values log: %v", err)
	}
}
