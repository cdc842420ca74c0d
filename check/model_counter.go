package check

import (
	"fmt"

	"github.com/anishathalye/porcupine"
)

// CounterOp is an operation of the counter model.
type CounterOp = string

// The counter model's operations.
const (
	CounterAdd CounterOp = "add"
	CounterGet CounterOp = "get"
)

// CounterInput is one operation on a counter.
type CounterInput struct {
	Op    CounterOp
	Key   string
	Delta int64 // add
	// Retries is how many times the client re-sent this add (no
	// idempotency) without the caller recording each try as an operation of
	// its own: each may have been applied as well. A key with a retried add
	// is checked against the at-least-once bounds only, since one operation
	// that may apply several times at several points has no linearization of
	// its own. Record each try as its own operation (earlier ones Unknown)
	// to have the key checked for linearizability too.
	Retries int
}

// CounterOutput is what a counter operation observed: an add's sum, its
// own delta included, or a get's value.
type CounterOutput struct {
	Value int64
}

// CounterModel is an int64 per key, 0 at first. An add whose output is nil
// (its outcome unknown) takes effect, or not.
func CounterModel() porcupine.Model {
	return porcupine.Model{
		Partition: partitionBy(func(in any) string { return in.(CounterInput).Key }),
		Init:      func() any { return int64(0) },
		Step: func(state, input, output any) (bool, any) {
			st, in := state.(int64), input.(CounterInput)
			out, known := output.(CounterOutput)
			switch in.Op {
			case CounterAdd:
				return !known || out.Value == st+in.Delta, st + in.Delta
			case CounterGet:
				return !known || out.Value == st, st
			}
			return false, st
		},
		DescribeOperation: func(input, output any) string {
			return fmt.Sprintf("%+v -> %+v", input, output)
		},
	}
}

func (in CounterInput) describe() string {
	if in.Op == CounterAdd {
		s := fmt.Sprintf("counter add %q %+d", in.Key, in.Delta)
		if in.Retries > 0 {
			s += fmt.Sprintf(" (%d retries)", in.Retries)
		}
		return s
	}
	return fmt.Sprintf("counter %s %q", in.Op, in.Key)
}
func (in CounterInput) accepts(out Output) bool {
	_, ok := out.(CounterOutput)
	return ok
}
func (out CounterOutput) describe() string { return fmt.Sprintf("= %d", out.Value) }
