package cache

import (
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment/vfs"
	"github.com/felixbroker/felix/segment/vfs/errorfs"
)

// A replicated shard's logs that ran out of space and were reopened once
// space was back are held again: the replica lets go of each failed log
// and holds the reopened one, which the shard then writes to at its
// leadership's generation.
func TestAReplicatedShardsReopenedLogsAreHeldAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		efs := errorfs.Wrap(vfs.NewMem())
		r := newFakeReplication()
		_, c := replicatedStore(t, efs, r, Config{})
		r.leads(0, 2)
		acked, sums := map[string]string{}, map[string]int64{}
		for i := range 20 {
			k := fmt.Sprintf("k%d", i%10)
			if err := putWaiting(c, k, "v"); err != nil {
				t.Fatal(err)
			}
			acked[k] = "v"
		}
		before := []*fakePart{r.part(t, 0, engine.PartCacheValues), r.part(t, 0, engine.PartCounters)}
		fillDisk(efs)
		putUntilRefused(t, c, acked, 20)
		for i := 1; ; i++ {
			err := addWaiting(c, "n", 1)
			if errors.Is(err, shardlog.ErrNoSpace) {
				break
			}
			if err != nil || i > 1000 {
				t.Fatalf("add %d on a full disk: %v; want acknowledged or ErrNoSpace", i, err)
			}
			sums["n"]++
		}
		efs.Clear()
		time.Sleep(shardlog.HealBackoffMax)
		synctest.Wait()
		sh := c.held(0)
		for part, old := range before {
			now := r.part(t, 0, part)
			if now == old || !old.released.Load() || now.released.Load() {
				t.Fatalf("part %d after its log was reopened: the old part released %v, a new one held %v",
					part, old.released.Load(), now != old && !now.released.Load())
			}
			if log := []*shardlog.Log{sh.log(), sh.counters.logs.Log()}[part]; now.pl.Log != log || log == old.pl.Log {
				t.Fatalf("part %d after its log was reopened holds another log than the shard's", part)
			}
		}
		wantValues(t, c, acked)
		if err := putWaiting(c, "k0", "after"); err != nil {
			t.Fatal(err)
		}
		if err := addWaiting(c, "n", 1); err != nil {
			t.Fatal(err)
		}
		sums["n"]++
		wantSums(t, c, sums)
		for part := range 2 {
			p := r.part(t, 0, part)
			recs := p.records(t)
			if last := recs[len(recs)-1]; p.appended.Load() == 0 || last.Generation != 2 {
				t.Errorf("part %d's reopened log: %d appends shipped, the last of generation %d; want shipped, at 2",
					part, p.appended.Load(), last.Generation)
			}
		}
	})
}
