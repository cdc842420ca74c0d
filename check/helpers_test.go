package check

import (
	"slices"
	"testing"
)

// script builds a history one step at a time, each step a tick of the
// caller's clock.
type script struct {
	rec  Recorder
	now  int64
	acks []Ack
	logs []ShardLogs
	// absent is the Options.Absent of the tables that need one.
	absent func(s Shard, offset uint64) bool
}

func (s *script) tick() int64 { s.now++; return s.now }

func (s *script) invoke(p int, in Input) Handle { return s.rec.Invoke(p, s.tick(), in) }

// ok is an operation invoked and answered before the next one begins.
func (s *script) ok(p int, in Input, out Output) { s.invoke(p, in).Ok(s.tick(), out) }

func (s *script) fail(p int, in Input)    { s.invoke(p, in).Fail(s.tick(), "refused") }
func (s *script) unknown(p int, in Input) { s.invoke(p, in).Unknown(s.tick(), "timed out") }

func (s *script) publish(p int, v string, at uint64) {
	s.ok(p, Publish{Shard: shardA, Value: v}, Published{Offset: at})
}

// read delivers records given as offset, value, offset, value...
func (s *script) read(p int, sub string, final bool, recs ...any) {
	s.ok(p, Read{Shard: shardA, Subscription: sub, Final: final}, Delivered{Records: records(recs...)})
}

func records(recs ...any) []Record {
	var out []Record
	for i := 0; i < len(recs); i += 2 {
		out = append(out, Record{Offset: uint64(recs[i].(int)), Value: recs[i+1].(string)})
	}
	return out
}

func (s *script) history() History {
	h := s.rec.History()
	h.Acks, h.Logs = s.acks, s.logs
	return h
}

var shardA = Shard{Stream: "t/ns/s", Index: 0}

// found are the kinds a report counts, in order.
func found(r *Report) []Kind {
	var out []Kind
	for _, k := range Kinds() {
		if r.Count(k) > 0 {
			out = append(out, k)
		}
	}
	return out
}

func requireKinds(t *testing.T, r *Report, want ...Kind) {
	t.Helper()
	slices.Sort(want)
	if got := found(r); !slices.Equal(got, want) {
		t.Fatalf("found %v, want %v:\n%s", got, want, r)
	}
	if r.Valid() != (len(want) == 0) {
		t.Fatalf("Valid() %v with %v found", r.Valid(), want)
	}
}

func entries(gen uint64, values ...string) []LogEntry {
	var out []LogEntry
	for i, v := range values {
		out = append(out, LogEntry{Offset: uint64(i), Generation: gen, Hash: HashValue(v)})
	}
	return out
}
