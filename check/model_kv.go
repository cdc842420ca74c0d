package check

import (
	"fmt"

	"github.com/anishathalye/porcupine"
)

// KVOp is an operation of the cache model.
type KVOp = string

// The cache model's operations.
const (
	KVGet           KVOp = "get"
	KVPut           KVOp = "put"
	KVDelete        KVOp = "del"
	KVCompareAndSet KVOp = "cas" // a conditional put
)

// KVInput is one operation of the register-per-key model of a cache.
// Every put writes a value no other put writes, so a conditional put at
// the offset a get returned is a compare-and-set on that get's value.
type KVInput struct {
	Op       KVOp
	Key      string
	Value    string // put, cas: the value written
	Expected string // cas: the value read at the offset it names
}

// KVOutput is what a cache operation observed.
type KVOutput struct {
	Found bool   // get: a value; put, del: the key held one before; cas: applied
	Value string // get
}

// KVModel is a register per key; "" is absent. An operation whose output
// is nil (its outcome unknown) takes effect, or not, with any output.
// Shared by the cache's own tests (engine/cache) and by Check.
func KVModel() porcupine.Model {
	return porcupine.Model{
		Partition: partitionBy(func(in any) string { return in.(KVInput).Key }),
		Init:      func() any { return "" },
		Step: func(state, input, output any) (bool, any) {
			st, in := state.(string), input.(KVInput)
			out, known := output.(KVOutput)
			switch in.Op {
			case KVGet:
				return !known || out.Found == (st != "") && out.Value == st, st
			case KVPut:
				return !known || out.Found == (st != ""), in.Value
			case KVDelete:
				return !known || out.Found == (st != ""), ""
			case KVCompareAndSet:
				if !known {
					if st == in.Expected {
						return true, in.Value
					}
					return true, st
				}
				if out.Found {
					return st == in.Expected, in.Value
				}
				return st != in.Expected, st
			}
			return false, st
		},
		DescribeOperation: func(input, output any) string {
			return fmt.Sprintf("%+v -> %+v", input, output)
		},
	}
}

// partitionBy splits a history by a key of each operation's input, in
// the order each key first appears.
func partitionBy(key func(input any) string) func([]porcupine.Operation) [][]porcupine.Operation {
	return func(history []porcupine.Operation) [][]porcupine.Operation {
		index := map[string]int{}
		var out [][]porcupine.Operation
		for _, op := range history {
			k := key(op.Input)
			i, ok := index[k]
			if !ok {
				i = len(out)
				index[k] = i
				out = append(out, nil)
			}
			out[i] = append(out[i], op)
		}
		return out
	}
}

func (in KVInput) describe() string {
	switch in.Op {
	case KVPut:
		return fmt.Sprintf("cache put %q=%q", in.Key, in.Value)
	case KVCompareAndSet:
		return fmt.Sprintf("cache cas %q %q->%q", in.Key, in.Expected, in.Value)
	}
	return fmt.Sprintf("cache %s %q", in.Op, in.Key)
}
func (in KVInput) accepts(out Output) bool {
	_, ok := out.(KVOutput)
	return ok
}
func (out KVOutput) describe() string { return fmt.Sprintf("found=%v %q", out.Found, out.Value) }
