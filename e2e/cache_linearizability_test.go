package e2e

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/felixbroker/felix/check"
	"github.com/felixbroker/felix/client"
)

// TestGetPutDeleteOverTheWireAreLinearizable: clients on connections of
// their own send gets, puts, deletes and compare-and-sets of a few keys to
// one broker at once; the history they observe (each operation from the
// moment it was sent to the moment its answer came) is linearizable.
// Gets race writes of their key all the time, so both the loop's get and
// the worker's (a write of the shard in flight) are exercised.
func TestGetPutDeleteOverTheWireAreLinearizable(t *testing.T) {
	b := startCacheBroker(t, nil)
	newCache(t, b.client(), "lin", client.CacheConfig{Shards: 2})
	const clients, opsEach = 8, 150
	keys := []string{"a", "b", "c", "d"}
	began := time.Now()
	now := func() int64 { return int64(time.Since(began)) }
	var mu sync.Mutex
	var history []porcupine.Operation
	var wg sync.WaitGroup
	for id := range clients {
		ca := b.client().Cache(client.CacheName{Tenant: "acme", Namespace: "prod", Name: "lin"})
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(id), 11))
			lastRead := map[string]client.Item{}
			for i := range opsEach {
				in := check.KVInput{Key: keys[rng.IntN(len(keys))]}
				call := now()
				out, err := runWireOp(t, ca, rng, id, i, &in, lastRead)
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
	if res := porcupine.CheckOperationsTimeout(check.KVModel(), history, 30*time.Second); res != porcupine.Ok {
		t.Fatalf("the history of %d operations is not linearizable (%v)", len(history), res)
	}
}

// runWireOp runs one random operation and fills in its input and output.
func runWireOp(t *testing.T, ca *client.Cache, rng *rand.Rand, id, i int, in *check.KVInput, lastRead map[string]client.Item) (check.KVOutput, error) {
	ctx, k := testCtx(t), []byte(in.Key)
	switch r := rng.IntN(10); {
	case r < 4:
		in.Op = check.KVGet
		it, err := ca.Get(ctx, k)
		if it.Found {
			lastRead[in.Key] = it
		}
		return check.KVOutput{Found: it.Found, Value: string(it.Value)}, err
	case r < 7:
		in.Op, in.Value = check.KVPut, fmt.Sprintf("c%d-%d", id, i)
		w, err := ca.Put(ctx, k, []byte(in.Value))
		return check.KVOutput{Found: w.Existed}, err
	case r < 8:
		in.Op = check.KVDelete
		w, err := ca.Delete(ctx, k)
		return check.KVOutput{Found: w.Existed}, err
	}
	last, ok := lastRead[in.Key]
	if !ok {
		in.Op = check.KVGet
		it, err := ca.Get(ctx, k)
		return check.KVOutput{Found: it.Found, Value: string(it.Value)}, err
	}
	in.Op, in.Value, in.Expected = check.KVCompareAndSet, fmt.Sprintf("c%d-%d", id, i), string(last.Value)
	_, err := ca.PutIfOffset(ctx, k, []byte(in.Value), last.Offset)
	if err != nil && isPrecondition(err) {
		return check.KVOutput{}, nil
	}
	return check.KVOutput{Found: err == nil}, err
}

func isPrecondition(err error) bool {
	var pe *client.PreconditionError
	return errors.As(err, &pe)
}
