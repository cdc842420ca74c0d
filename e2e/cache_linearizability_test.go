package e2e

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/felixbroker/felix/client"
)

// wireKVInput is one operation of the register-per-key model, as a client
// sent it over the wire. Every put writes a value no other put writes, so
// a compare-and-set at the offset a get returned is a compare-and-set on
// that get's value.
type wireKVInput struct {
	op       string // get, put, del, cas
	key      string
	value    string // put, cas: the value written
	expected string // cas: the value read at the offset it names
}

type wireKVOutput struct {
	found bool   // get: a value; put, del: the key held one before; cas: applied
	value string // get
}

// wireKVModel is a register per key; "" is absent.
var wireKVModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		for _, op := range history {
			k := op.Input.(wireKVInput).key
			byKey[k] = append(byKey[k], op)
		}
		out := make([][]porcupine.Operation, 0, len(byKey))
		for _, ops := range byKey {
			out = append(out, ops)
		}
		return out
	},
	Init: func() any { return "" },
	Step: func(state, input, output any) (bool, any) {
		st, in, out := state.(string), input.(wireKVInput), output.(wireKVOutput)
		switch in.op {
		case "get":
			return out.found == (st != "") && out.value == st, st
		case "put":
			return out.found == (st != ""), in.value
		case "del":
			return out.found == (st != ""), ""
		case "cas":
			if out.found {
				return st == in.expected, in.value
			}
			return st != in.expected, st
		}
		return false, st
	},
	DescribeOperation: func(input, output any) string { return fmt.Sprintf("%+v -> %+v", input, output) },
}

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
		ca := b.client().Cache("acme", "prod", "lin")
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(id), 11))
			lastRead := map[string]client.Item{}
			for i := range opsEach {
				in := wireKVInput{key: keys[rng.IntN(len(keys))]}
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
	if res := porcupine.CheckOperationsTimeout(wireKVModel, history, 30*time.Second); res != porcupine.Ok {
		t.Fatalf("the history of %d operations is not linearizable (%v)", len(history), res)
	}
}

// runWireOp runs one random operation and fills in its input and output.
func runWireOp(t *testing.T, ca *client.Cache, rng *rand.Rand, id, i int, in *wireKVInput, lastRead map[string]client.Item) (wireKVOutput, error) {
	ctx, k := testCtx(t), []byte(in.key)
	switch r := rng.IntN(10); {
	case r < 4:
		in.op = "get"
		it, err := ca.Get(ctx, k)
		if it.Found {
			lastRead[in.key] = it
		}
		return wireKVOutput{found: it.Found, value: string(it.Value)}, err
	case r < 7:
		in.op, in.value = "put", fmt.Sprintf("c%d-%d", id, i)
		w, err := ca.Put(ctx, k, []byte(in.value))
		return wireKVOutput{found: w.Existed}, err
	case r < 8:
		in.op = "del"
		w, err := ca.Delete(ctx, k)
		return wireKVOutput{found: w.Existed}, err
	}
	last, ok := lastRead[in.key]
	if !ok {
		in.op = "get"
		it, err := ca.Get(ctx, k)
		return wireKVOutput{found: it.Found, value: string(it.Value)}, err
	}
	in.op, in.value, in.expected = "cas", fmt.Sprintf("c%d-%d", id, i), string(last.Value)
	_, err := ca.PutIfOffset(ctx, k, []byte(in.value), last.Offset)
	if err != nil && isPrecondition(err) {
		return wireKVOutput{}, nil
	}
	return wireKVOutput{found: err == nil}, err
}

func isPrecondition(err error) bool {
	var pe *client.PreconditionError
	return errors.As(err, &pe)
}
