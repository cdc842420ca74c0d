package check

import (
	"fmt"
	"math"

	"github.com/anishathalye/porcupine"
)

// opsShownMax bounds the operations an example of a nonlinearizable key
// shows: enough for a key's whole history in a nemesis round or a seed (a
// few hundred operations at most), so that a failure can be read from its
// report alone, the run's logs aside.
const opsShownMax = 200

// family is one linearizability model and how its operations are told
// apart and keyed.
type family struct {
	kind  Kind
	model porcupine.Model
	key   func(in Input) (key string, ok bool)
}

var families = []family{
	{CacheNonlinearizable, KVModel(), func(in Input) (string, bool) {
		kv, ok := in.(KVInput)
		return kv.Key, ok
	}},
	{CounterNonlinearizable, CounterModel(), func(in Input) (string, bool) {
		c, ok := in.(CounterInput)
		return c.Key, ok
	}},
	{CursorNonlinearizable, CursorModel(), func(in Input) (string, bool) {
		c, ok := in.(CursorInput)
		return c.Key(), ok
	}},
}

// checkLinearizable checks each key of each model with porcupine, on the
// Recorder's sequence numbers. A failed operation is left out (it did not
// happen); one whose outcome is unknown may take effect at any point after
// it was invoked, which includes never (after everything else); a read
// whose outcome is unknown says nothing and is left out.
func checkLinearizable(r *Report, ops []Op) {
	for _, f := range families {
		byKey := map[string][]Op{}
		for _, op := range ops {
			if k, ok := f.key(op.Input); ok {
				byKey[k] = append(byKey[k], op)
			}
		}
		for _, k := range sortedKeys(byKey) {
			if f.kind == CounterNonlinearizable {
				checkCounterBounds(r, k, byKey[k])
				if retried(byKey[k]) {
					r.Stats.BoundsOnly++
					continue
				}
			}
			r.Stats.Partitions++
			if !porcupine.CheckOperations(f.model, toPorcupine(byKey[k])) {
				r.add(f.kind, fmt.Sprintf("key %q: %d operations fit no linearization (the first %d below)",
					k, len(byKey[k]), min(len(byKey[k]), opsShownMax)), byKey[k][:min(len(byKey[k]), opsShownMax)]...)
			}
		}
	}
}

func toPorcupine(ops []Op) []porcupine.Operation {
	var out []porcupine.Operation
	for _, op := range ops {
		p := porcupine.Operation{ClientId: op.Process, Input: op.Input, Call: op.InvokeSeq}
		switch {
		case op.Outcome == Fail:
			continue
		case op.Outcome == Ok:
			p.Output, p.Return = op.Output, op.CompleteSeq
		case isRead(op.Input):
			continue
		default:
			p.Return = math.MaxInt64
		}
		out = append(out, p)
	}
	return out
}

// isRead is true of the model operations that change nothing.
func isRead(in Input) bool {
	switch in := in.(type) {
	case KVInput:
		return in.Op == KVGet
	case CounterInput:
		return in.Op == CounterGet
	case CursorInput:
		return in.Op == CursorGet
	}
	return false
}

func retried(ops []Op) bool {
	for _, op := range ops {
		if op.Input.(CounterInput).Retries > 0 {
			return true
		}
	}
	return false
}

// Key is the cursor's partition key.
func (in CursorInput) Key() string { return in.Cursor }
