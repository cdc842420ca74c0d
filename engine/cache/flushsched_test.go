package cache

import (
	"fmt"
	"sync"
	"testing"

	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment/vfs"
)

// A 4-shard OnCommit cache whose shards' logs share a FlushScheduler
// (as the broker opens them), written by several goroutines at once and
// crashed after a varying number of file-system mutations: every put
// acknowledged before the crash is in the reopened cache, with its value.
func TestPutsThroughASharedFlushSchedulerSurviveACrash(t *testing.T) {
	crashes := 0
	for _, after := range []int{20, 40, 90, 150, 230, 333} {
		mem := vfs.NewMem()
		sched := shardlog.NewFlushScheduler()
		o := testOptions(mem, nil)
		o.FlushScheduler = sched
		s := openStore(t, o)
		if _, err := s.Create(cid, Config{Durable: true, Shards: 4}); err != nil {
			t.Fatal(err)
		}
		c := mustCache(t, s)
		mem.SetCrashAfter(after, vfs.DropUnsynced)
		var mu sync.Mutex
		acked := map[string]string{}
		var wg sync.WaitGroup
		for w := range 6 {
			wg.Go(func() {
				for i := range 40 {
					k, v := fmt.Sprintf("w%d-k%d", w, i%7), fmt.Sprintf("w%d-v%d", w, i)
					if _, err := c.Put([]byte(k), []byte(v), PutOptions{}); err != nil {
						return // the crash: nothing later is acknowledged
					}
					mu.Lock()
					acked[k] = v
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if !mem.Crashed() { // the flushes grouped more writes than that
			s.Close()
			sched.Close()
			continue
		}
		crashes++
		img := mem.CrashImage()
		s.Close()
		sched.Close()
		s = openStore(t, testOptions(img, nil))
		c = mustCache(t, s)
		for k, v := range acked {
			wantValue(t, c, k, v, -1)
		}
		s.Close()
	}
	if crashes < 3 {
		t.Fatalf("only %d of the runs crashed before the workload ended", crashes)
	}
}
