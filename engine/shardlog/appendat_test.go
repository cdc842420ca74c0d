package shardlog

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

// entriesAt are n records for offsets first.., with value(i) as payload,
// so a read can check each record landed at its offset.
func entriesAt(first, n int64) []Entry {
	es := make([]Entry, n)
	for i := range es {
		off := first + int64(i)
		es[i] = Entry{Key: key(off), Value: value(off), Timestamp: off + 1}
	}
	return es
}

// appendAtWait is AppendAt waiting for the acknowledgement.
func appendAtWait(l *Log, first int64, prevGen uint32, es []Entry, gen uint32) error {
	cw := &chanWaiter{ch: make(chan error, 1)}
	if err := l.AppendAt(first, prevGen, es, gen, cw); err != nil {
		return err
	}
	return <-cw.ch
}

func mustAppendAt(t *testing.T, l *Log, first int64, prevGen uint32, n int64, gen uint32) {
	t.Helper()
	if err := appendAtWait(l, first, prevGen, entriesAt(first, n), gen); err != nil {
		t.Fatalf("AppendAt(%d, prev %d, %d records, gen %d): %v", first, prevGen, n, gen, err)
	}
}

// checkGens asserts the log holds offsets 0.. with value(i) and gens[i].
func checkGens(t *testing.T, l *Log, gens []uint32) {
	t.Helper()
	recs := readAll(t, l)
	if len(recs) != len(gens) {
		t.Fatalf("log holds %d records, want %d", len(recs), len(gens))
	}
	checkPrefix(t, recs, 0)
	for i, r := range recs {
		if r.Generation != gens[i] {
			t.Fatalf("record %d has generation %d, want %d", r.Offset, r.Generation, gens[i])
		}
	}
}

// follow appends batches of 1 to 7 records under the generations given per
// run, as a leader would send them, and returns each record's generation.
func follow(t *testing.T, l *Log, runs []struct {
	gen uint32
	n   int64
}) []uint32 {
	t.Helper()
	var gens []uint32
	var prev uint32
	for _, r := range runs {
		for done := int64(0); done < r.n; {
			n := min(1+int64(len(gens))%7, r.n-done)
			mustAppendAt(t, l, int64(len(gens)), prev, n, r.gen)
			for range n {
				gens = append(gens, r.gen)
			}
			done += n
			prev = r.gen
		}
	}
	return gens
}

type run = struct {
	gen uint32
	n   int64
}

// Batches at the leader's offsets land there, with their generation, over
// several rollovers (4 KiB segments).
func TestAppendAtPlacesTheLeadersRecordsAtItsOffsets(t *testing.T) {
	l := mustOpen(t, testOptions(vfs.NewMem(), OnCommit()))
	defer l.Close()
	gens := follow(t, l, []run{{1, 40}, {2, 1}, {4, 60}})
	checkGens(t, l, gens)
	if l.End() != 101 || l.LastGeneration() != 4 {
		t.Fatalf("end %d last generation %d, want 101 and 4", l.End(), l.LastGeneration())
	}
	if got := [3]int64{l.GenerationEnd(1), l.GenerationEnd(3), l.GenerationEnd(4)}; got != [3]int64{40, 41, 101} {
		t.Fatalf("generation ends %v, want [40 41 101]", got)
	}
	if n := len(*l.segs.Load()); n < 3 {
		t.Fatalf("%d segments: the test should roll over", n)
	}
}

// wantRefused asserts err is a *DivergenceError of kind, and that the log
// did not move.
func wantRefused(t *testing.T, l *Log, err error, kind error, want DivergenceError) {
	t.Helper()
	var de *DivergenceError
	if !errors.Is(err, kind) || !errors.As(err, &de) {
		t.Fatalf("got %v, want a *DivergenceError matching %v", err, kind)
	}
	want.Kind = kind
	if *de != want {
		t.Fatalf("got %+v, want %+v", *de, want)
	}
	if contiguity := errors.Is(err, ErrNotContiguous); contiguity != (kind != ErrStaleGeneration) {
		t.Fatalf("%v matches ErrNotContiguous: %v", err, contiguity)
	}
	for _, other := range []error{ErrGap, ErrOverlap, ErrDiverged, ErrStaleGeneration} {
		if other != kind && errors.Is(err, other) {
			t.Fatalf("%v also matches %v", err, other)
		}
	}
	if l.End() != want.Want || l.LastGeneration() != want.LastGen {
		t.Fatalf("after a refusal: end %d last generation %d, want %d and %d", l.End(), l.LastGeneration(), want.Want, want.LastGen)
	}
}

// A gap, an overlap, a wrong previous generation and a stale generation
// are each refused with their own sentinel, and append nothing.
func TestAppendAtRefusesWhatDoesNotContinueTheLog(t *testing.T) {
	l := mustOpen(t, testOptions(vfs.NewMem(), OnCommit()))
	defer l.Close()
	wantRefused(t, l, appendAtWait(l, 0, 1, entriesAt(0, 1), 1), ErrDiverged,
		DivergenceError{Want: 0, LastGen: 0, Got: 0, PrevGen: 1, Gen: 1}) // nothing precedes offset 0
	wantRefused(t, l, appendAtWait(l, 1, 0, entriesAt(1, 1), 1), ErrGap,
		DivergenceError{Want: 0, LastGen: 0, Got: 1, PrevGen: 0, Gen: 1})
	gens := follow(t, l, []run{{1, 5}, {3, 5}})
	cases := []struct {
		first        int64
		prevGen, gen uint32
		kind         error
	}{
		{11, 3, 3, ErrGap},
		{7, 3, 3, ErrOverlap},
		{0, 0, 3, ErrOverlap},
		{10, 2, 3, ErrDiverged},
		{10, 4, 4, ErrDiverged},
		{10, 1, 1, ErrDiverged}, // an older leader's records after a diverged tail: diverged, not stale
		{10, 3, 2, ErrStaleGeneration},
	}
	for _, c := range cases {
		called := false
		err := l.AppendAt(c.first, c.prevGen, entriesAt(c.first, 2), c.gen, waiterFunc(func(int64, int64, error) { called = true }))
		wantRefused(t, l, err, c.kind, DivergenceError{Want: 10, LastGen: 3, Got: c.first, PrevGen: c.prevGen, Gen: c.gen})
		if called {
			t.Fatalf("the waiter of a refused AppendAt(%d) was called", c.first)
		}
	}
	if err := l.AppendAt(10, 3, nil, 3, nil); !errors.Is(err, ErrEmptyBatch) {
		t.Fatalf("empty batch: %v", err)
	}
	checkGens(t, l, gens)
	mustAppendAt(t, l, 10, 3, 1, 3)
}

type waiterFunc func(first, last int64, err error)

func (f waiterFunc) Committed(first, last int64, err error) { f(first, last, err) }

// catchUp is a follower's catch-up loop in miniature: it sends the
// follower what the leader holds from the follower's end, one generation
// run at a time, truncating the follower where AppendAt says it diverged,
// until both logs are one. It returns the truncations it made.
func catchUp(t *testing.T, leader, follower *Log) (truncations []int64) {
	t.Helper()
	for round := 0; follower.End() < leader.End(); round++ {
		if round > 100 {
			t.Fatalf("no progress: follower at %d, leader at %d", follower.End(), leader.End())
		}
		from := follower.End()
		prevGen, es, gen := leaderBatch(t, leader, from)
		err := appendAtWait(follower, from, prevGen, es, gen)
		var de *DivergenceError
		switch {
		case err == nil:
		case errors.Is(err, ErrDiverged) && errors.As(err, &de):
			to := min(follower.GenerationEnd(de.PrevGen), leader.GenerationEnd(de.LastGen))
			if err := follower.Truncate(to); err != nil {
				t.Fatalf("truncate to %d: %v", to, err)
			}
			truncations = append(truncations, to)
		default:
			t.Fatalf("AppendAt(%d): %v", from, err)
		}
	}
	return truncations
}

// leaderBatch is what a leader sends a follower at from: the generation of
// its record before from, and its records from there on under one
// generation.
func leaderBatch(t *testing.T, leader *Log, from int64) (prevGen uint32, es []Entry, gen uint32) {
	t.Helper()
	var prev []segment.Record
	if from > 0 {
		prev = readFrom(t, leader, from-1)
		prevGen, prev = prev[0].Generation, prev[1:]
	} else {
		prev = readFrom(t, leader, 0)
	}
	gen = prev[0].Generation
	for _, r := range prev {
		if r.Generation != gen {
			break
		}
		es = append(es, Entry{Key: r.Key, Value: r.Value, Timestamp: r.Timestamp})
	}
	return prevGen, es, gen
}

// readFrom reads the visible records from offset on.
func readFrom(t *testing.T, l *Log, offset int64) []segment.Record {
	t.Helper()
	var out []segment.Record
	for _, r := range readAll(t, l) {
		if r.Offset >= offset {
			out = append(out, r)
		}
	}
	return out
}

// After a divergence the follower truncates and asks again until its log
// is the leader's: when its last generation is above the leader's at that
// offset (its own GenerationEnd tells where), and below it (the leader's).
func TestAFollowerTruncatesWhereItDivergedAndCatchesUp(t *testing.T) {
	for _, c := range []struct {
		name             string
		leader, follower []run
		truncations      []int64
	}{
		// The follower led generation 3 briefly, from 40; the new leader
		// (4) kept generation 2's records to 50. The leader's end of
		// generation 3 (50) comes first, then the follower's own end of
		// the leader's generation there (2, at 40).
		{"follower led a generation", []run{{1, 30}, {2, 20}, {4, 30}}, []run{{1, 30}, {2, 10}, {3, 25}}, []int64{50, 40}},
		// The follower kept generation 2's records from 30 on, which leader
		// 3 replaced: only the leader knows where its generation 2 ends.
		{"follower kept an old generation", []run{{1, 30}, {3, 50}}, []run{{1, 30}, {2, 40}}, []int64{30}},
	} {
		t.Run(c.name, func(t *testing.T) {
			leader := mustOpen(t, testOptions(vfs.NewMem(), OnCommit()))
			defer leader.Close()
			follower := mustOpen(t, testOptions(vfs.NewMem(), OnCommit()))
			defer follower.Close()
			gens := follow(t, leader, c.leader)
			follow(t, follower, c.follower)
			got := catchUp(t, leader, follower)
			if fmt.Sprint(got) != fmt.Sprint(c.truncations) {
				t.Fatalf("truncated at %v, want %v", got, c.truncations)
			}
			checkGens(t, follower, gens)
		})
	}
}

// A follower's log reopens where it was, generation included, and the
// next AppendAt continues it; one after the restart is checked against
// what recovery found.
func TestAppendAtContinuesAfterARestart(t *testing.T) {
	mem := vfs.NewMem()
	o := testOptions(mem, OnCommit())
	l := mustOpen(t, o)
	gens := follow(t, l, []run{{1, 20}, {2, 30}})
	end, last := l.End(), l.LastGeneration()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = mustOpen(t, o)
	defer l.Close()
	if l.End() != end || l.LastGeneration() != last {
		t.Fatalf("reopened at %d generation %d, closed at %d generation %d", l.End(), l.LastGeneration(), end, last)
	}
	wantRefused(t, l, appendAtWait(l, end, 1, entriesAt(end, 1), 2), ErrDiverged,
		DivergenceError{Want: end, LastGen: 2, Got: end, PrevGen: 1, Gen: 2})
	mustAppendAt(t, l, end, 2, 3, 5)
	checkGens(t, l, append(gens, 5, 5, 5))
}

// A crash keeps every record AppendAt acknowledged under OnCommit, and the
// recovered log takes the leader's next batch where it ends.
func TestACrashKeepsEveryAcknowledgedAppendAt(t *testing.T) {
	mem := vfs.NewMem()
	o := testOptions(mem, OnCommit())
	l := mustOpen(t, o)
	before := mem.MutationCount()
	followUntilCrash(l, 150)
	l.Close()
	total := mem.MutationCount() - before
	step := 1
	if testing.Short() {
		step = 3
	}
	crashes, withAcks := 0, 0
	for n := 1; n <= total; n += step {
		for _, mode := range []vfs.CrashMode{vfs.DropUnsynced, vfs.TearLastWrite(20)} {
			mem := vfs.NewMem()
			l := mustOpen(t, testOptions(mem, OnCommit()))
			mem.SetCrashAfter(n, mode)
			acked := followUntilCrash(l, 150)
			l.Close()
			if !mem.Crashed() {
				continue
			}
			crashes++
			if acked > 0 {
				withAcks++
			}
			checkCrashedFollower(t, testOptions(mem.CrashImage(), OnCommit()), acked, fmt.Sprintf("crash after mutation %d (%v)", n, mode))
		}
	}
	if crashes == 0 || withAcks == 0 {
		t.Fatalf("%d crashes over %d mutations, %d after an acknowledgement: the sweep tests nothing", crashes, total, withAcks)
	}
	t.Logf("%d crashes over %d mutations, %d after an acknowledgement", crashes, total, withAcks)
}

// followUntilCrash appends offsets 0..n-1 in batches of 3, the generation
// going up every 30 records, over several segments. It waits for the
// acknowledgements after every fourth batch (so flushes fall at varied
// places), and returns how many leading records were acknowledged.
func followUntilCrash(l *Log, n int64) (acked int64) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	done := map[int64]int64{} // first -> last+1 of acknowledged batches
	for first := int64(0); first < n; first += 3 {
		gen, prev := uint32(1+first/30), uint32((first-1)/30+1)
		if first == 0 {
			prev = 0
		}
		wg.Add(1)
		err := l.AppendAt(first, prev, entriesAt(first, 3), gen, waiterFunc(func(f, last int64, err error) {
			if err == nil {
				mu.Lock()
				done[f] = last + 1
				mu.Unlock()
			}
			wg.Done()
		}))
		if err != nil {
			wg.Done()
			break
		}
		if first%12 == 9 {
			wg.Wait()
		}
	}
	wg.Wait()
	for next, ok := done[0]; ok; next, ok = done[acked] {
		acked = next
	}
	return acked
}

func checkCrashedFollower(t *testing.T, o Options, acked int64, what string) {
	t.Helper()
	l, err := Open(o)
	if err != nil {
		t.Fatalf("%s: the crash image does not open: %v", what, err)
	}
	defer l.Close()
	end := l.End()
	if end < acked {
		t.Fatalf("%s: log ends at %d, %d records were acknowledged", what, end, acked)
	}
	gens := make([]uint32, end)
	for i := range gens {
		gens[i] = uint32(1 + i/30)
	}
	checkGens(t, l, gens)
	prev := uint32(0)
	if end > 0 {
		prev = gens[end-1]
	}
	mustAppendAt(t, l, end, prev, 1, 9)
}

// A warm AppendAt allocates nothing, as Append does not: on the real
// drivers, as Append's test (MemFS allocates as its files grow).
func TestAppendAtAllocatesNothingInSteadyState(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	forEachDriver(t, appendAtAllocatesNothing)
}

func appendAtAllocatesNothing(t *testing.T, fs vfs.FS, dir string) {
	o := testOptions(fs, None())
	o.Dir = dir
	o.SegmentBytes = 64 << 20
	l := mustOpen(t, o)
	defer l.Close()
	entries := []Entry{{Key: []byte("k"), Value: make([]byte, 128), Timestamp: 1}}
	cw := &chanWaiter{ch: make(chan error, 1)}
	next := int64(0)
	appendOne := func() {
		if err := l.AppendAt(next, 1, entries, 1, cw); err != nil {
			t.Fatal(err)
		}
		if err := <-cw.ch; err != nil {
			t.Fatal(err)
		}
		next++
	}
	if err := appendAtWait(l, 0, 0, entries, 1); err != nil {
		t.Fatal(err)
	}
	next = 1
	for range 2000 {
		appendOne() // grow the waiter queue and buffers to their working size
	}
	if allocs := testing.AllocsPerRun(1000, appendOne); allocs > 0.05 {
		t.Fatalf("%.2f allocations per AppendAt", allocs)
	}
}

// Followers racing for one offset: exactly one is appended, the others are
// told the log already has it, and the log holds the winner's records.
func TestConcurrentAppendAtAtOneOffsetAppendsExactlyOne(t *testing.T) {
	l := mustOpen(t, testOptions(vfs.NewMem(), OnCommit()))
	defer l.Close()
	const racers, rounds = 8, 20
	for round := range int64(rounds) {
		first := round * 2
		prev := uint32(0)
		if round > 0 {
			prev = 1
		}
		errs := make([]error, racers)
		var wg sync.WaitGroup
		for i := range racers {
			wg.Go(func() {
				es := []Entry{{Value: fmt.Appendf(nil, "racer-%d", i)}, {Value: fmt.Appendf(nil, "racer-%d", i)}}
				errs[i] = appendAtWait(l, first, prev, es, 1)
			})
		}
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner < 0:
				winner = i
			case err == nil:
				t.Fatalf("round %d: racers %d and %d both appended at %d", round, winner, i, first)
			case !errors.Is(err, ErrOverlap):
				t.Fatalf("round %d: racer %d: %v, want ErrOverlap", round, i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no racer appended", round)
		}
		recs := readFrom(t, l, first)
		if len(recs) != 2 || string(recs[0].Value) != fmt.Sprintf("racer-%d", winner) || string(recs[1].Value) != fmt.Sprintf("racer-%d", winner) {
			t.Fatalf("round %d: log holds %d records from %d, not racer %d's two", round, len(recs), first, winner)
		}
	}
}
