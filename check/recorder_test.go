package check

import (
	"strings"
	"sync"
	"testing"
)

// Concurrent clients record through one Recorder: every operation is
// there once, with its own id, and sequence numbers that are unique and
// order each invocation before its completion.
func TestTheRecorderIsSafeForConcurrentClients(t *testing.T) {
	const clients, each = 8, 50
	var rec Recorder
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for i := range each {
				h := rec.Invoke(c, int64(i), Publish{Shard: shardA, Value: "v"})
				switch i % 3 {
				case 0:
					h.Ok(int64(i), Published{Offset: uint64(i)})
				case 1:
					h.Fail(int64(i), "refused")
				default:
					h.Unknown(int64(i), "timed out")
				}
			}
			rec.Ack(Ack{Shard: shardA, Broker: "b1"})
		})
	}
	wg.Wait()
	h := rec.History()
	if len(h.Ops) != clients*each || len(h.Acks) != clients {
		t.Fatalf("%d ops, %d acks recorded, want %d, %d", len(h.Ops), len(h.Acks), clients*each, clients)
	}
	seqs := map[int64]bool{}
	for i, op := range h.Ops {
		if op.ID != i || op.Outcome == Pending || op.InvokeSeq >= op.CompleteSeq || seqs[op.InvokeSeq] || seqs[op.CompleteSeq] {
			t.Fatalf("op %d: %+v", i, op)
		}
		seqs[op.InvokeSeq], seqs[op.CompleteSeq] = true, true
	}
}

// A history is a copy: recording more does not change one taken before.
func TestARecordersHistoryIsACopy(t *testing.T) {
	var rec Recorder
	h := rec.Invoke(1, 1, Publish{Shard: shardA, Value: "a"})
	before := rec.History()
	h.Ok(2, Published{Offset: 0})
	if before.Ops[0].Outcome != Pending || rec.History().Ops[0].Outcome != Ok {
		t.Fatalf("before %v, after %v", before.Ops[0], rec.History().Ops[0])
	}
}

// Completing an operation twice, or with another operation's output, is
// a bug in the caller, and says so.
func TestMisuseOfAHandlePanics(t *testing.T) {
	for name, misuse := range map[string]func(r *Recorder){
		"twice": func(r *Recorder) {
			h := r.Invoke(1, 1, Publish{Shard: shardA, Value: "a"})
			h.Fail(2, "refused")
			h.Ok(3, Published{})
		},
		"wrong output": func(r *Recorder) {
			r.Invoke(1, 1, Publish{Shard: shardA, Value: "a"}).Ok(2, Delivered{})
		},
		"no output": func(r *Recorder) {
			r.Invoke(1, 1, Publish{Shard: shardA, Value: "a"}).Ok(2, nil)
		},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if p, _ := recover().(string); !strings.Contains(p, "a bug in the caller") {
					t.Fatalf("recovered %q", p)
				}
			}()
			misuse(&Recorder{})
		})
	}
}

// A pending operation counts as unknown: a publish never answered may be
// read, and an acknowledged one never read is unseen at the end.
func TestAPendingOperationIsUnknown(t *testing.T) {
	var s script
	s.invoke(1, Publish{Shard: shardA, Value: "a"})
	s.publish(2, "b", 1)
	s.read(3, "final", true, 0, "a")
	r := Check(s.history(), Options{})
	requireKinds(t, &r, Unseen)
}
