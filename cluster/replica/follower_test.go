package replica

import (
	"errors"
	"math"
	"testing"
	"testing/synctest"

	"github.com/felixbroker/felix/cluster/peer"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/netio/wire"
	"github.com/felixbroker/felix/segment/vfs"
)

// synced makes r's follower the synchronised follower of generation gen
// (its log empty or a prefix of the fake leader's) and returns the answer
// to a probe after it.
func (r *folRig) synced(gen uint64) {
	r.t.Helper()
	end := r.log.End()
	a := r.send(replicate(gen, end, uint64(r.log.LastGeneration()), nil))
	if a.Status != wire.ReplicateMismatch {
		r.t.Fatalf("first REPLICATE of generation %d: %+v, want a mismatch while the generation is persisted", gen, a)
	}
	synctest.Wait()
	st := r.f.fences.State()
	if st.Generation != gen || st.Synced != gen {
		r.t.Fatalf("after the first REPLICATE of generation %d the fence is %+v, want synchronised there", gen, st)
	}
}

func TestFollowerRefusesAStaleGenerationAndLeavesTheLogAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newFolRig(t, shardlog.OnCommit(), nil)
		if _, err := r.f.Fence(5, 1); err != nil {
			t.Fatal(err)
		}
		before, muts := r.content(), r.fs.MutationCount()
		a := r.send(replicate(4, 0, 0, records(0, 4, 4)))
		if a.Status != wire.ReplicateFenced || a.FenceGen != 5 || a.Durable != 0 {
			t.Fatalf("REPLICATE at generation 4 below the fence at 5: %+v, want fenced at 5", a)
		}
		synctest.Wait()
		if got := r.content(); !sameLines(got, before) || r.fs.MutationCount() != muts || nextOffset(r.log) != 0 {
			t.Fatalf("a stale REPLICATE touched the disk: %v, %d mutations after %d", got, r.fs.MutationCount(), muts)
		}
		for _, gen := range []uint64{0, math.MaxUint32 + 1} {
			err := r.f.Replicate(folLeader, replicate(gen, 0, 0, records(0, 1)), func(a wire.ReplicateAck) {
				t.Errorf("generation %d answered %+v, want no answer", gen, a)
			})
			if !errors.Is(err, ErrMalformed) {
				t.Errorf("REPLICATE at generation %d: %v, want ErrMalformed", gen, err)
			}
		}
		if r.f.Generation() != 5 {
			t.Fatalf("generation %d after refusals, want 5", r.f.Generation())
		}
	})
}

func TestFollowerPersistsARisingGenerationBeforeItAppends(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newFolRig(t, shardlog.OnCommit(), nil)
		a := r.send(replicate(3, 0, 0, records(0, 3, 3)))
		if a.Status != wire.ReplicateMismatch || a.Durable != 0 || a.LogEnd != 0 {
			t.Fatalf("first REPLICATE of generation 3: %+v, want a mismatch at 0 vouching for nothing", a)
		}
		synctest.Wait()
		if got := r.content(); len(got) != 0 {
			t.Fatalf("appended %v before the generation was persisted and the log synchronised", got)
		}
		img := r.fs.Crash(0)
		st, err := OpenFenceStore(img, folDir)
		if err != nil || st.State() != (FenceState{Generation: 3, Synced: 3}) {
			t.Fatalf("after a crash the fence is %+v (%v), want generation 3, synchronised (an empty log)", st.State(), err)
		}
	})
}

func TestFollowerAppendsForItsSynchronisedLeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newFolRig(t, shardlog.OnCommit(), nil)
		r.synced(2)
		m := replicate(2, 0, 0, records(0, 1, 2, 2))
		m.Commit = 2
		a := r.send(m)
		if want := (wire.ReplicateAck{Status: wire.ReplicateAppended, FenceGen: 2, LogEnd: 3, LastGen: 2, Durable: 3}); a != want {
			t.Fatalf("append: %+v, want %+v", a, want)
		}
		if got := r.content(); !sameLines(got, want(1, 2, 2)) {
			t.Fatalf("log holds %v", got)
		}
		if c := r.f.Commit(); c != 2 {
			t.Fatalf("Commit %d, want the leader's 2", c)
		}
		m = replicate(2, 3, 2, nil)
		m.Commit = 10
		if a := r.send(m); a.Status != wire.ReplicateAppended || a.LogEnd != 3 || a.Durable != 3 {
			t.Fatalf("a probe at the end: %+v, want appended at 3", a)
		}
		if c := r.f.Commit(); c != 3 {
			t.Fatalf("Commit %d, want the leader's 10 capped at the log's end 3", c)
		}
		if at, ok := r.f.LeaderHeard(); !ok || at.IsZero() {
			t.Fatal("LeaderHeard says nothing was heard")
		}
		if a := r.send(replicate(2, 3, 1, nil)); a.Status != wire.ReplicateMismatch || a.LogEnd != 3 || a.LastGen != 2 {
			t.Fatalf("a probe with the wrong previous generation: %+v, want a mismatch at 3 after 2", a)
		}
	})
}

// The brief's case: the follower ends in records of generation 3 the
// leader never had; the leader holds generations 1, 2 and 4. One round
// truncates to the end of generation 2, then generation 4 is appended.
func TestFollowerTruncatesWhatTheNewLeaderNeverHad(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newFolRig(t, shardlog.OnCommit(), []uint32{1, 1, 1, 2, 2, 3, 3, 3})
		if r.f.Generation() != 3 {
			t.Fatalf("F %d, want the log's last generation 3", r.f.Generation())
		}
		r.leader.set(1, 1, 1, 2, 2, 4, 4)
		r.synced(4)
		if q := r.leader.questions(); len(q) != 1 || q[0] != 3 {
			t.Fatalf("asked the leader %v, want once, for generation 3", q)
		}
		if got := r.content(); !sameLines(got, want(1, 1, 1, 2, 2)) {
			t.Fatalf("after the truncation the log holds %v", got)
		}
		if a := r.send(replicate(4, 7, 4, nil)); a.Status != wire.ReplicateMismatch || a.LogEnd != 5 || a.LastGen != 2 {
			t.Fatalf("a probe at the leader's end: %+v, want a mismatch at 5 after 2", a)
		}
		if a := r.send(replicate(4, 5, 2, records(5, 4, 4))); a.Status != wire.ReplicateAppended || a.LogEnd != 7 {
			t.Fatalf("generation 4's records: %+v, want appended to 7", a)
		}
		if got := r.content(); !sameLines(got, want(1, 1, 1, 2, 2, 4, 4)) {
			t.Fatalf("the log holds %v, want the leader's", got)
		}
	})
}

// Several rounds: the follower holds more of generation 1 than the leader,
// whose generation 2 began earlier. Asked about 3, the leader says it
// holds 2 up to offset 4; the follower's log ends there with generation
// 1, not 2, so it asks about 1 and truncates to offset 2.
func TestFollowerTruncatesInSeveralRounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newFolRig(t, shardlog.OnCommit(), []uint32{1, 1, 1, 1, 3, 3})
		r.leader.set(1, 1, 2, 2, 4)
		r.synced(4)
		if q := r.leader.questions(); len(q) != 2 || q[0] != 3 || q[1] != 1 {
			t.Fatalf("asked the leader %v, want generations 3 then 1", q)
		}
		if got := r.content(); !sameLines(got, want(1, 1)) {
			t.Fatalf("after the truncation the log holds %v, want the leader's first 2 records", got)
		}
		// A catch-up batch of several generations: one AppendAt per run.
		if a := r.send(replicate(4, 2, 1, records(2, 2, 2, 4))); a.Status != wire.ReplicateAppended || a.LogEnd != 5 || a.LastGen != 4 {
			t.Fatalf("catch-up: %+v, want appended to 5 after 4", a)
		}
		if got := r.content(); !sameLines(got, want(1, 1, 2, 2, 4)) {
			t.Fatalf("the log holds %v, want the leader's", got)
		}
	})
}

func TestFollowerSynchronisesAgainAfterTheLeaderRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newFolRig(t, shardlog.OnCommit(), []uint32{1, 1})
		r.leader.set(1, 1)
		r.leader.refuse = 1
		r.send(replicate(2, 2, 1, nil))
		synctest.Wait()
		if st := r.f.fences.State(); st.Generation != 2 || st.Synced == 2 {
			t.Fatalf("after a refused GENERATION_END the fence is %+v, want generation 2 not synchronised", st)
		}
		if a := r.send(replicate(2, 2, 1, records(2, 2))); a.Status != wire.ReplicateMismatch {
			t.Fatalf("REPLICATE before synchronising: %+v, want a mismatch", a)
		}
		synctest.Wait()
		if a := r.send(replicate(2, 2, 1, records(2, 2))); a.Status != wire.ReplicateAppended {
			t.Fatalf("REPLICATE once synchronised: %+v, want appended", a)
		}
		if got := r.content(); !sameLines(got, want(1, 1, 2)) {
			t.Fatalf("the log holds %v", got)
		}
	})
}

func TestFollowerSkipsADuplicatedBatchWithoutTruncating(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newFolRig(t, shardlog.OnCommit(), nil)
		r.synced(2)
		batch := replicate(2, 0, 0, records(0, 2, 2, 2))
		if a := r.send(batch); a.Status != wire.ReplicateAppended || a.LogEnd != 3 {
			t.Fatalf("append: %+v", a)
		}
		if a := r.send(batch); a.Status != wire.ReplicateAppended || a.LogEnd != 3 || a.Durable != 3 {
			t.Fatalf("the same batch again: %+v, want appended at 3, nothing added", a)
		}
		if a := r.send(replicate(2, 1, 2, records(1, 2, 2, 2, 2))); a.Status != wire.ReplicateAppended || a.LogEnd != 5 {
			t.Fatalf("a batch overlapping the end: %+v, want its new records appended to 5", a)
		}
		if a := r.send(replicate(2, 0, 0, records(0, 2))); a.Status != wire.ReplicateAppended || a.LogEnd != 5 {
			t.Fatalf("an old batch: %+v, want appended at 5", a)
		}
		if got := r.content(); !sameLines(got, want(2, 2, 2, 2, 2)) || nextOffset(r.log) != 5 {
			t.Fatalf("the log holds %v (next %d), want 5 records once each", got, nextOffset(r.log))
		}
	})
}

func TestFollowerRefusesAGapThenTakesTheMissingBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newFolRig(t, shardlog.OnCommit(), nil)
		r.synced(2)
		later := replicate(2, 3, 2, records(3, 2, 2))
		if a := r.send(later); a.Status != wire.ReplicateMismatch || a.LogEnd != 0 {
			t.Fatalf("a batch past the end: %+v, want a mismatch at 0", a)
		}
		if got := r.content(); len(got) != 0 {
			t.Fatalf("a gap appended %v", got)
		}
		if a := r.send(replicate(2, 0, 0, records(0, 2, 2, 2))); a.Status != wire.ReplicateAppended || a.LogEnd != 3 {
			t.Fatalf("the missing batch: %+v", a)
		}
		if a := r.send(later); a.Status != wire.ReplicateAppended || a.LogEnd != 5 {
			t.Fatalf("the later batch again: %+v", a)
		}
		if got := r.content(); !sameLines(got, want(2, 2, 2, 2, 2)) {
			t.Fatalf("the log holds %v", got)
		}
	})
}

func TestFollowerRefusesMalformedRecords(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newFolRig(t, shardlog.OnCommit(), nil)
		r.synced(2)
		for name, m := range map[string]*wire.Replicate{
			"offsets skip":         replicate(2, 0, 0, append(records(0, 2), records(2, 2)...)),
			"above the leader's":   replicate(2, 0, 0, records(0, 3)),
			"below the prev":       replicate(2, 0, 2, records(0, 1)),
			"generations fall":     replicate(2, 0, 0, append(records(0, 2), records(1, 1)...)),
			"a damaged checksum":   replicate(2, 0, 0, flip(records(0, 2, 2), 50)),
			"prev above the batch": replicate(2, 0, 3, nil),
		} {
			err := r.f.Replicate(folLeader, m, func(a wire.ReplicateAck) { t.Errorf("%s: answered %+v", name, a) })
			if !errors.Is(err, ErrMalformed) {
				t.Errorf("%s: %v, want ErrMalformed", name, err)
			}
		}
		synctest.Wait()
		if got := r.content(); len(got) != 0 {
			t.Fatalf("malformed batches appended %v", got)
		}
	})
}

func flip(b []byte, at int) []byte {
	b[at] ^= 0xff
	return b
}

// A divergence of a synchronised log (which a correct leader never
// causes) is taken as a log no longer synchronised: it truncates again,
// by KIP-279, rather than appending or truncating blindly.
func TestFollowerSynchronisesAgainOnADivergence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newFolRig(t, shardlog.OnCommit(), []uint32{1, 1, 1})
		r.leader.set(1, 1, 1)
		r.synced(2)
		r.leader.set(1, 1, 2, 2)
		if a := r.send(replicate(2, 3, 2, records(3, 2))); a.Status != wire.ReplicateMismatch || a.Durable != 0 {
			t.Fatalf("a batch after a generation the log does not have there: %+v, want an unsynchronised mismatch", a)
		}
		synctest.Wait()
		if got := r.content(); !sameLines(got, want(1, 1)) {
			t.Fatalf("after synchronising again the log holds %v, want the leader's first 2", got)
		}
		if a := r.send(replicate(2, 2, 1, records(2, 2, 2))); a.Status != wire.ReplicateAppended || a.LogEnd != 4 {
			t.Fatalf("the leader's records: %+v", a)
		}
	})
}

// An append queued for the leader of F is answered Fenced, not Appended,
// when a fence above F was accepted before it committed: the fence's log
// end may not hold it, so it must not count in the old leader's quorum.
func TestFollowerDoesNotAcknowledgeBelowAFenceAcceptedMeanwhile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newFolRig(t, shardlog.OnCommit(), nil)
		held := &holdingLog{Log: r.log, release: make(chan struct{})}
		f, err := NewFollower(FollowerConfig{Ref: folRef, Log: held, FS: r.fs, Dir: folDir, Transport: r.tr})
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		r.f = f
		r.synced(2)
		if err := f.Replicate(folLeader, replicate(2, 0, 0, records(0, 2)), r.answer); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		ok, err := f.Fence(3, 1)
		if err != nil {
			t.Fatal(err)
		}
		close(held.release)
		if a := <-r.acks; a.Status != wire.ReplicateFenced || a.FenceGen != 3 {
			t.Fatalf("an append of generation 2 committed after a fence at 3: %+v, want fenced", a)
		}
		if ok.Generation != 3 || ok.Epoch != 1 {
			t.Fatalf("FenceOK %+v", ok)
		}
	})
}

// holdingLog holds every acknowledgement until release is closed.
type holdingLog struct {
	*shardlog.Log
	release chan struct{}
}

func (h *holdingLog) AppendAt(first int64, prevGen uint32, entries []shardlog.Entry, gen uint32, w shardlog.Waiter) error {
	if w != nil {
		w = heldWaiter{w, h.release}
	}
	return h.Log.AppendAt(first, prevGen, entries, gen, w)
}

type heldWaiter struct {
	w       shardlog.Waiter
	release chan struct{}
}

func (h heldWaiter) Committed(first, last int64, err error) {
	go func() {
		<-h.release
		h.w.Committed(first, last, err)
	}()
}

// Under OnCommit a follower's Appended comes only after its fsync: a crash
// at the very moment of the answer keeps the records. Under None the same
// crash loses them, so the test can tell.
func TestFollowerAcknowledgesOnCommitOnlyOnceDurable(t *testing.T) {
	for _, c := range []struct {
		mode    shardlog.FsyncMode
		durable bool
	}{{shardlog.OnCommit(), true}, {shardlog.None(), false}} {
		t.Run(c.mode.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newFolRig(t, c.mode, nil)
				r.synced(2)
				img := make(chan *shardlogImage, 1)
				crashAtAnswer := func(a wire.ReplicateAck) {
					img <- &shardlogImage{fs: r.fs.Crash(0), ack: a} // on the committer, before anything else runs
				}
				if err := r.f.Replicate(folLeader, replicate(2, 0, 0, records(0, 2, 2, 2)), crashAtAnswer); err != nil {
					t.Fatal(err)
				}
				got := <-img
				if got.ack.Status != wire.ReplicateAppended || got.ack.Durable != 3 {
					t.Fatalf("answer %+v", got.ack)
				}
				l, err := shardlog.Open(folOptions(got.fs, c.mode))
				if err != nil {
					t.Fatal(err)
				}
				defer l.Close()
				kept := logContent(t, l)
				if c.durable && !sameLines(kept, want(2, 2, 2)) {
					t.Fatalf("a crash at the Appended answer left %v, want the 3 records", kept)
				}
				if !c.durable && len(kept) == 3 {
					t.Fatalf("under None the crash kept every record: the test cannot tell an early answer")
				}
			})
		})
	}
}

type shardlogImage struct {
	fs  *vfs.MemFS
	ack wire.ReplicateAck
}

// A fence above the generation being synchronised ends that
// synchronisation before it is answered: this broker may lead at the
// fenced generation next, and nothing may truncate under its appends.
func TestFollowerFenceEndsASynchronisationWithAnOlderLeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newFolRig(t, shardlog.OnCommit(), []uint32{1, 1, 3})
		r.leader.set(1, 1, 2)
		r.net.SetFaults("f", folLeader, peer.Faults{Hold: true})
		r.send(replicate(4, 3, 2, nil))
		synctest.Wait() // the GENERATION_END waits in the network
		if _, err := r.f.Fence(5, 1); err != nil {
			t.Fatal(err)
		}
		r.net.SetFaults("f", folLeader, peer.Faults{})
		synctest.Wait()
		if got := r.content(); !sameLines(got, want(1, 1, 3)) {
			t.Fatalf("the log holds %v after the fence, want it untouched", got)
		}
		if st := r.f.fences.State(); st.Generation != 5 || st.Synced == 5 || st.Synced == 4 {
			t.Fatalf("fence state %+v, want generation 5 synchronised with neither leader", st)
		}
	})
}
