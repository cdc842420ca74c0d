package cache

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/felixbroker/felix/segment/vfs"
)

// kvInput is one operation of the register-per-key model. Every put writes
// a value no other put writes, so a compare-and-set at the offset a get
// returned is a compare-and-set on that get's value.
type kvInput struct {
	op       string // get, put, del, cas
	key      string
	value    string // put, cas: the value written
	expected string // cas: the value read at the offset it names
}

type kvOutput struct {
	found bool   // get: a value; put, del: the key held one before; cas: applied
	value string // get
}

// kvModel is a register per key; "" is absent.
var kvModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		for _, op := range history {
			k := op.Input.(kvInput).key
			byKey[k] = append(byKey[k], op)
		}
		var out [][]porcupine.Operation
		for _, ops := range byKey {
			out = append(out, ops)
		}
		return out
	},
	Init: func() any { return "" },
	Step: func(state, input, output any) (bool, any) {
		st, in, out := state.(string), input.(kvInput), output.(kvOutput)
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
	DescribeOperation: func(input, output any) string {
		return fmt.Sprintf("%+v -> %+v", input, output)
	},
}

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
				in, call := kvInput{key: key}, now()
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
	res := porcupine.CheckOperationsTimeout(kvModel, history, 30*time.Second)
	if res != porcupine.Ok {
		t.Fatalf("history of %d operations is not linearizable (%v)", len(history), res)
	}
}

// runOp runs one random operation and fills in its input and output.
func runOp(c *Cache, rng *rand.Rand, client, i int, in *kvInput, lastRead map[string]Item) (kvOutput, error) {
	k := []byte(in.key)
	switch r := rng.IntN(10); {
	case r < 4:
		in.op = "get"
		it, err := c.Get(k, nil)
		if it.Found {
			lastRead[in.key] = Item{Found: true, Offset: it.Offset, Value: it.Value}
		}
		return kvOutput{found: it.Found, value: string(it.Value)}, err
	case r < 7:
		in.op, in.value = "put", fmt.Sprintf("c%d-%d-%0*d", client, i, rng.IntN(200), 0)
		w, err := c.Put(k, []byte(in.value), PutOptions{})
		return kvOutput{found: w.Existed}, err
	case r < 8:
		in.op = "del"
		w, err := c.Delete(k, Condition{})
		return kvOutput{found: w.Existed}, err
	}
	seen, ok := lastRead[in.key]
	if !ok {
		in.op = "get"
		it, err := c.Get(k, nil)
		return kvOutput{found: it.Found, value: string(it.Value)}, err
	}
	in.op, in.expected, in.value = "cas", string(seen.Value), fmt.Sprintf("c%d-%d-cas", client, i)
	_, err := c.Put(k, []byte(in.value), PutOptions{Cond: Condition{Kind: CondIfOffset, Offset: seen.Offset}})
	if errors.Is(err, ErrPreconditionFailed) {
		return kvOutput{}, nil
	}
	return kvOutput{found: err == nil}, err
}
