package cache

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/felixbroker/felix/check"
	"github.com/felixbroker/felix/segment/vfs"
)

// Gets, puts, deletes and compare-and-sets from concurrent clients, with
// compaction running beside them, form a linearizable history: with gets
// answered from the value cache and without it.
func TestGetPutDeleteAreLinearizable(t *testing.T) {
	for _, vc := range []struct {
		name  string
		bytes int64
	}{{"on", 0}, {"off", -1}} {
		t.Run("value-cache="+vc.name, func(t *testing.T) {
			o := testOptions(vfs.NewMem(), nil)
			o.ValueCacheBytes = vc.bytes
			c := newCacheWith(t, o, Config{Durable: true, Shards: 2})
			checkLinearizable(t, c)
			if st := c.store.values.stats(); (st.Hits > 0) != (vc.bytes == 0) {
				t.Fatalf("value cache %s: %+v", vc.name, st)
			}
		})
	}
}

func checkLinearizable(t *testing.T, c *Cache) {
	defer c.store.Close()
	const clients, opsEach = 8, 120
	keys := []string{"a", "b", "c", "d"}
	began := time.Now()
	now := func() int64 { return int64(time.Since(began)) }
	var mu sync.Mutex
	var history []porcupine.Operation
	stop := make(chan struct{})
	var compacting sync.WaitGroup
	compacting.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := c.Compact(); err != nil {
				t.Error(err)
				return
			}
		}
	})
	var wg sync.WaitGroup
	for id := range clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(id), 7))
			var lastRead map[string]Item = map[string]Item{}
			for i := range opsEach {
				key := keys[rng.IntN(len(keys))]
				in, call := check.KVInput{Key: key}, now()
				out, err := runOp(c, rng, id, i, &in, lastRead)
				if err != nil {
					t.Error(err)
					return
				}
				op := porcupine.Operation{ClientId: id, Input: in, Call: call, Output: out, Return: now()}
				mu.Lock()
				history = append(history, op)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(stop)
	compacting.Wait()
	res := porcupine.CheckOperationsTimeout(check.KVModel(), history, 30*time.Second)
	if res != porcupine.Ok {
		t.Fatalf("history of %d operations is not linearizable (%v)", len(history), res)
	}
}

// runOp runs one random operation and fills in its input and output.
func runOp(c *Cache, rng *rand.Rand, client, i int, in *check.KVInput, lastRead map[string]Item) (check.KVOutput, error) {
	k := []byte(in.Key)
	switch r := rng.IntN(10); {
	case r < 4:
		in.Op = "get"
		it, err := c.Get(k, nil)
		if it.Found {
			lastRead[in.Key] = Item{Found: true, Offset: it.Offset, Value: it.Value}
		}
		return check.KVOutput{Found: it.Found, Value: string(it.Value)}, err
	case r < 7:
		in.Op, in.Value = "put", fmt.Sprintf("c%d-%d-%0*d", client, i, rng.IntN(200), 0)
		w, err := c.Put(k, []byte(in.Value), PutOptions{})
		return check.KVOutput{Found: w.Existed}, err
	case r < 8:
		in.Op = "del"
		w, err := c.Delete(k, Condition{})
		return check.KVOutput{Found: w.Existed}, err
	}
	seen, ok := lastRead[in.Key]
	if !ok {
		in.Op = "get"
		it, err := c.Get(k, nil)
		return check.KVOutput{Found: it.Found, Value: string(it.Value)}, err
	}
	in.Op, in.Expected, in.Value = "cas", string(seen.Value), fmt.Sprintf("c%d-%d-cas", client, i)
	_, err := c.Put(k, []byte(in.Value), PutOptions{Cond: Condition{Kind: CondIfOffset, Offset: seen.Offset}})
	if errors.Is(err, ErrPreconditionFailed) {
		return check.KVOutput{}, nil
	}
	return check.KVOutput{Found: err == nil}, err
}
