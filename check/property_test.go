package check

import (
	"math/rand/v2"
	"slices"
	"testing"
)

const (
	propertySeeds = 40
	propertyProcs = 5
	propertySteps = 400
)

// Histories of a correct system pass every check, whatever the seed.
// The histories hold every outcome, pending ones among them.
func TestGeneratedHistoriesAreValid(t *testing.T) {
	outcomes := map[Outcome]int{}
	for seed := range uint64(propertySeeds) {
		h := genHistory(seed, propertyProcs, propertySteps)
		if r := Check(h, Options{}); !r.Valid() {
			t.Fatalf("seed %d: a correct system's history:\n%s", seed, &r)
		}
		for _, op := range h.Ops {
			outcomes[op.Outcome]++
		}
	}
	for _, o := range []Outcome{Pending, Ok, Fail, Unknown} {
		if outcomes[o] == 0 {
			t.Errorf("no %s operation in %d seeds' histories", o, propertySeeds)
		}
	}
	t.Logf("outcomes over %d seeds: %v", propertySeeds, outcomes)
}

// mutation injects one anomaly into a valid history, or returns false
// when the history offers nothing to inject it into.
type mutation struct {
	kind   Kind
	mutate func(h *History, rng *rand.Rand) bool
}

// Each generated history, with one anomaly injected, is caught with the
// anomaly's kind; and every mutation found something to inject into on
// some seed (else the test would prove nothing).
func TestEveryInjectedAnomalyIsCaught(t *testing.T) {
	applied := map[Kind]int{}
	for seed := range uint64(propertySeeds) {
		h := genHistory(seed, propertyProcs, propertySteps)
		for _, m := range mutations {
			mh := cloneHistory(h)
			if !m.mutate(&mh, rand.New(rand.NewPCG(seed, uint64(m.kind)))) {
				continue
			}
			applied[m.kind]++
			if r := Check(mh, Options{}); r.Count(m.kind) == 0 {
				t.Fatalf("seed %d: %s injected, not found:\n%s", seed, m.kind, &r)
			}
		}
		if r := Check(h, Options{}); !r.Valid() {
			t.Fatalf("seed %d: a mutation changed the history it copied:\n%s", seed, &r)
		}
	}
	t.Logf("mutations applied over %d seeds: %v", propertySeeds, applied)
	for _, k := range Kinds() {
		if applied[k] == 0 {
			t.Errorf("no seed's history took a %s", k)
		}
	}
}

// cloneHistory copies what a mutation may change: the ops, each read's
// records, the acks, the promotions and the logs.
func cloneHistory(h History) History {
	c := History{Ops: slices.Clone(h.Ops), Acks: slices.Clone(h.Acks), Promotions: slices.Clone(h.Promotions)}
	for i, op := range c.Ops {
		if d, ok := op.Output.(Delivered); ok {
			c.Ops[i].Output = Delivered{Records: slices.Clone(d.Records)}
		}
	}
	for _, l := range h.Logs {
		l.Final = slices.Clone(l.Final)
		reps := slices.Clone(l.Replicas)
		for i := range reps {
			reps[i].Entries = slices.Clone(reps[i].Entries)
		}
		l.Replicas = reps
		c.Logs = append(c.Logs, l)
	}
	return c
}

// pick is a random element of the indexes where ok holds.
func pick(rng *rand.Rand, n int, ok func(i int) bool) (int, bool) {
	var is []int
	for i := range n {
		if ok(i) {
			is = append(is, i)
		}
	}
	if len(is) == 0 {
		return 0, false
	}
	return is[rng.IntN(len(is))], true
}

func deliveredBy(op Op) []Record {
	if d, ok := op.Output.(Delivered); ok && op.Outcome == Ok {
		return d.Records
	}
	return nil
}

func isFinal(op Op) bool {
	in, ok := op.Input.(Read)
	return ok && in.Final
}

// ackedRead picks a publish acknowledged and read.
func ackedRead(h *History, rng *rand.Rand) (int, bool) {
	read := map[string]bool{}
	for _, op := range h.Ops {
		for _, rec := range deliveredBy(op) {
			read[rec.Value] = true
		}
	}
	return pick(rng, len(h.Ops), func(i int) bool {
		p, ok := h.Ops[i].Input.(Publish)
		return ok && h.Ops[i].Outcome == Ok && read[p.Value]
	})
}

// dropValue takes v out of the reads that keep(op) selects.
func dropValue(h *History, v string, keep func(Op) bool) {
	for i, op := range h.Ops {
		if recs := deliveredBy(op); recs != nil && keep(op) {
			h.Ops[i].Output = Delivered{Records: slices.DeleteFunc(recs, func(r Record) bool { return r.Value == v })}
		}
	}
}

// appendOp adds an operation after every other.
func appendOp(h *History, in Input, outcome Outcome, out Output) {
	var seq int64
	for _, op := range h.Ops {
		seq = max(seq, op.CompleteSeq, op.InvokeSeq)
	}
	h.Ops = append(h.Ops, Op{ID: len(h.Ops), Process: 99, Input: in, Outcome: outcome, Output: out,
		InvokeSeq: seq + 1, CompleteSeq: seq + 2})
}

// lastFinalRead is the index of the last final read of a shard that
// delivered something.
func lastFinalRead(h *History) (int, bool) {
	for i := len(h.Ops) - 1; i >= 0; i-- {
		if isFinal(h.Ops[i]) && len(deliveredBy(h.Ops[i])) > 0 {
			return i, true
		}
	}
	return 0, false
}

// okOutput picks an Ok operation whose input matches.
func okOp(h *History, rng *rand.Rand, match func(Input) bool) (int, bool) {
	return pick(rng, len(h.Ops), func(i int) bool { return h.Ops[i].Outcome == Ok && match(h.Ops[i].Input) })
}
