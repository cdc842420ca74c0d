package store

import (
	"context"
	"testing"
	"time"
)

const election = "felix/control-plane"

func campaign(t testing.TB, s Store, lease LeaseID, value string) *Leadership {
	t.Helper()
	l, err := s.Campaign(deadline(t), election, lease, []byte(value))
	if err != nil {
		t.Fatalf("campaign of %q: %v", value, err)
	}
	return l
}

// campaignAsync campaigns on another goroutine; the result arrives once it
// leads, fails, or ctx ends.
type campaignResult struct {
	leader *Leadership
	err    error
}

func campaignAsync(ctx context.Context, s Store, lease LeaseID, value string) <-chan campaignResult {
	ch := make(chan campaignResult, 1)
	go func() {
		l, err := s.Campaign(ctx, election, lease, []byte(value))
		ch <- campaignResult{l, err}
	}()
	return ch
}

func awaitLeader(t testing.TB, ch <-chan campaignResult) *Leadership {
	t.Helper()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("the campaign failed: %v", r.err)
		}
		return r.leader
	case <-time.After(waitMax):
		t.Fatal("the campaign did not win within", waitMax)
	}
	return nil
}

// awaitCandidates waits until the election has n candidate keys, so a
// campaign started on another goroutine is known to be waiting.
func awaitCandidates(t testing.TB, s Store, n int) {
	t.Helper()
	var w Watch
	for {
		kvs, rev, err := s.Range(deadline(t), electionPrefix(election))
		if err != nil {
			t.Fatal(err)
		}
		if len(kvs) == n {
			return
		}
		if w == nil {
			w = watch(t, s, electionPrefix(election), rev+1)
		}
		nextBatch(t, w)
	}
}

// guardedPut is the control plane's write: a put that only its leader may make.
func guardedPut(l *Leadership, key, value string) (TxnResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), waitMax)
	defer cancel()
	return l.Txn(ctx, Txn{Then: []Op{Put(key, []byte(value))}})
}

func testCampaignAlone(t *testing.T, h harness) {
	s := h.store
	lease := grant(t, s, time.Minute)
	l := campaign(t, s, lease.ID, "cp-a")
	kv := get(t, s, l.Key())
	if kv.CreateRevision != l.Epoch() || string(kv.Value) != "cp-a" || kv.Lease != lease.ID || l.Lease() != lease.ID {
		t.Fatalf("leader key %+v, epoch %d", kv, l.Epoch())
	}
	leader, err := Leader(deadline(t), s, election)
	if err != nil || leader.Key != l.Key() || leader.CreateRevision != l.Epoch() {
		t.Fatalf("Leader: %+v, %v", leader, err)
	}
	if res, err := guardedPut(l, "cp/assignment", "1"); err != nil || !res.Succeeded {
		t.Fatalf("the leader's guarded write: %+v, %v", res, err)
	}
	again := campaign(t, s, lease.ID, "cp-a2") // the same candidate: same key and epoch, new value
	if again.Epoch() != l.Epoch() || string(get(t, s, l.Key()).Value) != "cp-a2" {
		t.Fatalf("a second campaign on one lease: epoch %d, want %d", again.Epoch(), l.Epoch())
	}
	_, err = Leader(deadline(t), s, "felix/none")
	wantErr(t, err, ErrNoLeader)
}

func testResign(t *testing.T, h harness) {
	s := h.store
	a := campaign(t, s, grant(t, s, time.Minute).ID, "cp-a")
	bWon := campaignAsync(deadline(t), s, grant(t, s, time.Minute).ID, "cp-b")
	awaitCandidates(t, s, 2)
	if err := a.Resign(deadline(t)); err != nil {
		t.Fatal(err)
	}
	b := awaitLeader(t, bWon)
	if b.Epoch() <= a.Epoch() {
		t.Fatalf("the new epoch %d is not above the old %d", b.Epoch(), a.Epoch())
	}
	_, err := guardedPut(a, "cp/assignment", "from a")
	wantErr(t, err, ErrNotLeader)
	if err := a.Resign(deadline(t)); err != nil {
		t.Fatalf("a second resign: %v", err)
	}
	if res, err := guardedPut(b, "cp/assignment", "from b"); err != nil || !res.Succeeded {
		t.Fatalf("the new leader's write: %+v, %v", res, err)
	}
}

// testDeposedByRevoke: A leads, B waits; A's lease is revoked (as a dead
// control plane's would expire); B leads, and A, not knowing, writes.
func testDeposedByRevoke(t *testing.T, h harness) {
	s := h.store
	leaseA := grant(t, s, time.Minute)
	a := campaign(t, s, leaseA.ID, "cp-a")
	bWon := campaignAsync(deadline(t), s, grant(t, s, time.Minute).ID, "cp-b")
	awaitCandidates(t, s, 2)
	if err := s.Revoke(deadline(t), leaseA.ID); err != nil {
		t.Fatal(err)
	}
	b := awaitLeader(t, bWon)
	wantDeposed(t, s, a, b)
}

func testDeposedByExpiry(t *testing.T, h harness) {
	s := h.store
	leaseA := grant(t, s, time.Second)
	a := campaign(t, s, leaseA.ID, "cp-a")
	bWon := campaignAsync(deadline(t), s, grant(t, s, time.Minute).ID, "cp-b")
	awaitCandidates(t, s, 2)
	h.elapse(leaseA.TTL + time.Second)
	b := awaitLeader(t, bWon)
	wantDeposed(t, s, a, b)
}

// wantDeposed checks that a's writes are refused, whichever way it makes
// them, and b's are not.
func wantDeposed(t *testing.T, s Store, a, b *Leadership) {
	t.Helper()
	if b.Epoch() <= a.Epoch() {
		t.Fatalf("the new epoch %d is not above the deposed %d", b.Epoch(), a.Epoch())
	}
	raw := txn(t, s, Txn{If: []Cmp{a.Guard()}, Then: []Op{Put("cp/assignment", []byte("from a"))}})
	if raw.Succeeded {
		t.Fatal("a txn guarded by the deposed leader's epoch was applied")
	}
	_, err := guardedPut(a, "cp/assignment", "from a")
	wantErr(t, err, ErrNotLeader)
	if get(t, s, "cp/assignment").Exists() {
		t.Fatal("the deposed leader wrote")
	}
	if res, err := guardedPut(b, "cp/assignment", "from b"); err != nil || !res.Succeeded {
		t.Fatalf("the new leader's write: %+v, %v", res, err)
	}
}

func testGuardedOwnCompare(t *testing.T, h harness) {
	s := h.store
	l := campaign(t, s, grant(t, s, time.Minute).ID, "cp-a")
	res, err := l.Txn(deadline(t), Txn{If: []Cmp{Present("cp/missing")}, Then: []Op{Put("cp/x", nil)}})
	if err != nil || res.Succeeded {
		t.Fatalf("a guarded txn whose own compare fails: %+v, %v; want not succeeded, no error", res, err)
	}
	if res, err := guardedPut(l, "cp/x", ""); err != nil || !res.Succeeded {
		t.Fatalf("the leader still leads: %+v, %v", res, err)
	}
}

func testCampaignCancelled(t *testing.T, h harness) {
	s := h.store
	a := campaign(t, s, grant(t, s, time.Minute).ID, "cp-a")
	ctx, cancel := context.WithCancel(deadline(t))
	bResult := campaignAsync(ctx, s, grant(t, s, time.Minute).ID, "cp-b")
	awaitCandidates(t, s, 2)
	cancel()
	if r := <-bResult; r.err == nil {
		t.Fatal("a cancelled campaign won")
	}
	awaitCandidates(t, s, 1)
	if leader, err := Leader(deadline(t), s, election); err != nil || leader.Key != a.Key() {
		t.Fatalf("after a withdrawal: %+v, %v", leader, err)
	}
}

func testCampaignEndedLease(t *testing.T, h harness) {
	s := h.store
	lease := grant(t, s, time.Minute)
	if err := s.Revoke(deadline(t), lease.ID); err != nil {
		t.Fatal(err)
	}
	_, err := s.Campaign(deadline(t), election, lease.ID, nil)
	wantErr(t, err, ErrLeaseNotFound)
	_, err = s.Campaign(deadline(t), election, NoLease, nil)
	wantErr(t, err, ErrInvalid)
}

func testObserver(t *testing.T, h harness) {
	s := h.store
	o, err := Observe(deadline(t), s, election)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	next := func() KV {
		t.Helper()
		kv, err := o.Next(deadline(t))
		if err != nil {
			t.Fatal(err)
		}
		return kv
	}
	if kv := next(); kv.Exists() {
		t.Fatalf("an empty election's leader: %+v", kv)
	}
	a := campaign(t, s, grant(t, s, time.Minute).ID, "cp-a")
	b := campaignAsync(deadline(t), s, grant(t, s, time.Minute).ID, "cp-b")
	if kv := next(); kv.Key != a.Key() || string(kv.Value) != "cp-a" {
		t.Fatalf("observed %+v, want a", kv)
	}
	awaitCandidates(t, s, 2)
	if err := a.Resign(deadline(t)); err != nil {
		t.Fatal(err)
	}
	bl := awaitLeader(t, b)
	if kv := next(); kv.Key != bl.Key() || kv.CreateRevision != bl.Epoch() {
		t.Fatalf("observed %+v, want b", kv)
	}
	if err := bl.Resign(deadline(t)); err != nil {
		t.Fatal(err)
	}
	if kv := next(); kv.Exists() {
		t.Fatalf("observed %+v after both resigned", kv)
	}
}
