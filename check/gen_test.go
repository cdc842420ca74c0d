package check

import (
	"fmt"
	"math/rand/v2"
)

// world is a correct system, run from a seed, whose history every check
// must pass: two shards' logs (with control records among the records,
// which no read delivers), a cache, counters and a group cursor, used by
// concurrent processes whose operations each take effect at one instant
// between their invocation and their completion, or (failed) never, or
// (unknown) either.
type world struct {
	rng      *rand.Rand
	rec      Recorder
	now      int64
	logs     map[Shard][]string // "" is a control record
	cache    map[string]string
	counters map[string]int64
	cursors  map[string]uint64
	procs    []*proc
	acks     []Ack
	values   int // values written so far: each put and publish writes a new one
}

var genShards = []Shard{shardA, {Stream: "t/ns/s", Index: 1}}

const genControl = ""

// proc is one client: at most one operation in flight.
type proc struct {
	id      int
	h       Handle
	in      Input
	busy    bool
	applied bool // its effect was decided
	outcome Outcome
	out     Output
	next    map[Shard]uint64 // its subscription's next offset
	lastGet map[string]string
}

// genHistory runs the world for steps steps.
func genHistory(seed uint64, procs, steps int) History {
	w := &world{rng: rand.New(rand.NewPCG(seed, 16)), logs: map[Shard][]string{}, cache: map[string]string{},
		counters: map[string]int64{}, cursors: map[string]uint64{}}
	for i := range procs {
		w.procs = append(w.procs, &proc{id: i, next: map[Shard]uint64{}, lastGet: map[string]string{}})
	}
	for range steps {
		w.step(w.procs[w.rng.IntN(len(w.procs))])
	}
	w.finalReads(procs)
	h := w.rec.History()
	h.Acks = w.acks
	for _, s := range genShards {
		h.Logs = append(h.Logs, w.shardLogs(s))
		// Every shard's leader replaced at the end, once its last ack is sent.
		h.Promotions = append(h.Promotions, Promotion{Shard: s, Generation: 2, Time: w.now + 1})
	}
	return h
}

func (w *world) tick() int64 { w.now += 1 + int64(w.rng.IntN(3)); return w.now }

func (w *world) step(p *proc) {
	switch {
	case !p.busy:
		p.in = w.chooseInput(p)
		p.h, p.busy, p.applied = w.rec.Invoke(p.id, w.tick(), p.in), true, false
	case !p.applied:
		p.outcome, p.out = w.apply(p)
		p.applied = true
	default:
		switch p.outcome {
		case Ok:
			p.h.Ok(w.tick(), p.out)
		case Fail:
			p.h.Fail(w.tick(), "refused")
		default:
			p.h.Unknown(w.tick(), "timed out")
		}
		p.busy = false
	}
}

func (w *world) newValue() string {
	w.values++
	return fmt.Sprintf("v%d", w.values)
}

func (w *world) chooseInput(p *proc) Input {
	shard := genShards[w.rng.IntN(len(genShards))]
	key := []string{"k1", "k2"}[w.rng.IntN(2)]
	switch r := w.rng.IntN(20); {
	case r < 6:
		return Publish{Shard: shard, Value: w.newValue()}
	case r < 10:
		return Read{Shard: shard, Subscription: fmt.Sprintf("p%d", p.id)}
	case r < 11:
		return KVInput{Op: KVGet, Key: key}
	case r < 12:
		return KVInput{Op: KVPut, Key: key, Value: w.newValue()}
	case r < 13:
		if seen, ok := p.lastGet[key]; ok && seen != "" {
			return KVInput{Op: KVCompareAndSet, Key: key, Expected: seen, Value: w.newValue()}
		}
		return KVInput{Op: KVDelete, Key: key}
	case r < 14:
		return CounterInput{Op: CounterAdd, Key: "n", Delta: int64(1 + w.rng.IntN(3))}
	case r < 15:
		return CounterInput{Op: CounterAdd, Key: "retried", Delta: int64(1 + w.rng.IntN(3)), Retries: w.rng.IntN(2)}
	case r < 17:
		return CounterInput{Op: CounterGet, Key: []string{"n", "retried"}[w.rng.IntN(2)]}
	case r < 18:
		return CursorInput{Op: CursorCommit, Cursor: "g/0", Offset: uint64(w.rng.IntN(50))}
	}
	return CursorInput{Op: CursorGet, Cursor: "g/0"}
}

// decide picks an outcome for a write: mostly Ok, sometimes Fail (not
// applied), sometimes Unknown (applied or not).
func (w *world) decide() (Outcome, bool) {
	switch r := w.rng.IntN(10); {
	case r < 7:
		return Ok, true
	case r < 8:
		return Fail, false
	default:
		return Unknown, w.rng.IntN(2) == 0
	}
}

func (w *world) apply(p *proc) (Outcome, Output) {
	switch in := p.in.(type) {
	case Publish:
		return w.applyPublish(in)
	case Read:
		return Ok, w.applyRead(p, in)
	case KVInput:
		return w.applyKV(p, in)
	case CounterInput:
		return w.applyCounter(in)
	case CursorInput:
		return w.applyCursor(in)
	}
	panic("unreachable")
}

func (w *world) applyPublish(in Publish) (Outcome, Output) {
	outcome, applied := w.decide()
	if !applied {
		return outcome, nil
	}
	if w.rng.IntN(8) == 0 {
		w.logs[in.Shard] = append(w.logs[in.Shard], genControl) // a new generation's start record
	}
	off := uint64(len(w.logs[in.Shard]))
	w.logs[in.Shard] = append(w.logs[in.Shard], in.Value)
	if outcome == Ok {
		w.acks = append(w.acks, Ack{Shard: in.Shard, Broker: "b1", Generation: 1, Offset: off,
			Time: w.now, LeaseSent: w.now - int64(w.rng.IntN(750)), Lease: 1000})
	}
	return outcome, Published{Offset: off}
}

// applyRead delivers up to three records from the subscription's position.
func (w *world) applyRead(p *proc, in Read) Output {
	log := w.logs[in.Shard]
	var d Delivered
	off := p.next[in.Shard]
	for ; off < uint64(len(log)) && len(d.Records) < 3; off++ {
		if log[off] != genControl {
			d.Records = append(d.Records, Record{Offset: off, Value: log[off]})
		}
	}
	p.next[in.Shard] = off
	return d
}

func (w *world) applyKV(p *proc, in KVInput) (Outcome, Output) {
	st := w.cache[in.Key]
	if in.Op == KVGet {
		p.lastGet[in.Key] = st
		return Ok, KVOutput{Found: st != "", Value: st}
	}
	outcome, applied := w.decide()
	if !applied {
		return outcome, nil
	}
	switch in.Op {
	case KVPut:
		w.cache[in.Key] = in.Value
	case KVDelete:
		delete(w.cache, in.Key)
	case KVCompareAndSet:
		if st != in.Expected {
			return outcome, KVOutput{}
		}
		w.cache[in.Key] = in.Value
	}
	return outcome, KVOutput{Found: st != ""}
}

func (w *world) applyCounter(in CounterInput) (Outcome, Output) {
	if in.Op == CounterGet {
		return Ok, CounterOutput{Value: w.counters[in.Key]}
	}
	outcome, applied := w.decide()
	if !applied {
		return outcome, nil
	}
	w.counters[in.Key] += in.Delta * int64(1+w.rng.IntN(1+in.Retries))
	return outcome, CounterOutput{Value: w.counters[in.Key]}
}

func (w *world) applyCursor(in CursorInput) (Outcome, Output) {
	if in.Op == CursorGet {
		return Ok, CursorOutput{Offset: w.cursors[in.Cursor]}
	}
	outcome, applied := w.decide()
	if applied {
		w.cursors[in.Cursor] = in.Offset
	}
	return outcome, CursorOutput{}
}

// finalReads reads every shard from the start, in batches, as a process
// of its own that joins once the workload stopped.
func (w *world) finalReads(procs int) {
	for i, s := range genShards {
		p := &proc{id: procs + i, next: map[Shard]uint64{}}
		for p.next[s] < uint64(len(w.logs[s])) {
			in := Read{Shard: s, Subscription: "final", Final: true}
			h := w.rec.Invoke(p.id, w.tick(), in)
			h.Ok(w.tick(), w.applyRead(p, in))
		}
	}
}

// shardLogs are three replicas: two hold the whole log, one lags; the
// watermark is where the lagging one ends or above.
func (w *world) shardLogs(s Shard) ShardLogs {
	var full []LogEntry
	for off, v := range w.logs[s] {
		full = append(full, LogEntry{Offset: uint64(off), Generation: 1, Hash: HashValue(v)})
	}
	lag := w.rng.IntN(len(full) + 1)
	return ShardLogs{Shard: s, Watermark: uint64(lag + w.rng.IntN(len(full)-lag+1)), Final: full,
		Replicas: []ReplicaLog{{Broker: "b1", Entries: full}, {Broker: "b2", Entries: full}, {Broker: "b3", Entries: full[:lag]}}}
}
