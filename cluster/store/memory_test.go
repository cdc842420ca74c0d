package store

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

// TestMemoryFailsOverInsideSynctest runs a control-plane handover on the
// bubble's fake clock: A leads and renews every TTL/3, then stops; B,
// waiting, leads exactly one TTL after A's last renewal, and A's write is
// refused.
func TestMemoryFailsOverInsideSynctest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		s := NewMemory(MemoryConfig{}) // SystemClock: the bubble's
		defer s.Close()
		leaseA, _ := s.Grant(ctx, 3*time.Second)
		leaseB, _ := s.Grant(ctx, time.Hour)
		a, err := s.Campaign(ctx, election, leaseA.ID, []byte("cp-a"))
		if err != nil {
			t.Fatal(err)
		}
		bWon := campaignAsync(ctx, s, leaseB.ID, "cp-b")
		for range 10 {
			time.Sleep(leaseA.TTL / 3) // the bubble's time: the renewal period
			if _, err := s.KeepAlive(ctx, leaseA.ID); err != nil {
				t.Fatal(err)
			}
		}
		lastRenewal := time.Now()
		synctest.Wait()
		if len(bWon) != 0 {
			t.Fatal("B won while A renewed its lease")
		}
		b := awaitLeader(t, bWon)
		if held := time.Since(lastRenewal); held != leaseA.TTL {
			t.Fatalf("B led %v after A's last renewal, want exactly the TTL %v", held, leaseA.TTL)
		}
		wantDeposed(t, s, a, b)
	})
}

func TestMemoryKeepAliveRenewsForAFullTTL(t *testing.T) {
	h := memoryHarness(t)
	s := h.store
	l := grant(t, s, 2*time.Second)
	txn(t, s, Txn{Then: []Op{PutWithLease("k", nil, l.ID)}})
	h.elapse(l.TTL - time.Nanosecond)
	if _, err := s.KeepAlive(deadline(t), l.ID); err != nil {
		t.Fatalf("a keepalive just before the deadline: %v", err)
	}
	h.elapse(l.TTL - time.Nanosecond)
	if !get(t, s, "k").Exists() {
		t.Fatal("the key went before a TTL passed since the keepalive")
	}
	h.elapse(time.Nanosecond)
	if get(t, s, "k").Exists() {
		t.Fatal("the key outlived its lease")
	}
}

func TestMemoryLeasesExpireInDeadlineOrder(t *testing.T) {
	h := memoryHarness(t)
	s := h.store
	late := grant(t, s, 3*time.Second)
	early := grant(t, s, 2*time.Second)
	txn(t, s, Txn{Then: []Op{PutWithLease("late", nil, late.ID), PutWithLease("early", nil, early.ID)}})
	w := watch(t, s, "", revision(t, s)+1)
	h.elapse(time.Minute)
	got := events(t, w, 2)
	if got[0].KV.Key != "early" || got[1].KV.Key != "late" || got[1].Revision() != got[0].Revision()+1 {
		t.Fatalf("expiry events %v, want early then late, one revision each", reduce(got))
	}
}

// TestMemoryALaggingWatchErrsOnceItsHistoryIsGone: the history bound
// compacts what a slow watch has not read; it ends with ErrCompacted and
// never skips to what is left.
func TestMemoryALaggingWatchErrsOnceItsHistoryIsGone(t *testing.T) {
	s := NewMemory(MemoryConfig{Clock: NewManualClock(time.Unix(0, 0)), HistoryRevisionsMax: 4})
	defer s.Close()
	from := revision(t, s) + 1
	keepingUp, lagging := watch(t, s, "", from), watch(t, s, "", from)
	for i := range 20 {
		put(t, s, "k", "v")
		if got := events(t, keepingUp, 1); got[0].Revision() != from+int64(i) {
			t.Fatalf("the watch keeping up read %v", reduce(got))
		}
	}
	wantErr(t, watchErr(t, lagging), ErrCompacted)
	if _, err := s.Watch(deadline(t), "", from); err != nil {
		t.Fatal(err)
	}
}

func TestMemoryCloseEndsAWaitingCampaign(t *testing.T) {
	h := memoryHarness(t)
	s := h.store
	campaign(t, s, grant(t, s, time.Minute).ID, "cp-a")
	b := campaignAsync(deadline(t), s, grant(t, s, time.Minute).ID, "cp-b")
	awaitCandidates(t, s, 2)
	s.Close()
	select {
	case r := <-b:
		wantErr(t, r.err, ErrClosed)
	case <-time.After(waitMax):
		t.Fatal("Close left a campaign waiting")
	}
}

func TestManualClockRunsTimersInDeadlineOrder(t *testing.T) {
	c := NewManualClock(time.Unix(0, 0))
	var order []string
	at := func(name string) func() {
		return func() { order = append(order, name+"@"+c.Now().Sub(time.Unix(0, 0)).String()) }
	}
	c.AfterFunc(2*time.Second, at("b"))
	c.AfterFunc(time.Second, at("a"))
	c.AfterFunc(2*time.Second, at("b2")) // ties run in the order set
	stopped := c.AfterFunc(time.Second, at("never"))
	c.AfterFunc(3*time.Second, func() { c.AfterFunc(time.Second, at("set-by-c")) })
	if !stopped.Stop() || stopped.Stop() {
		t.Fatal("Stop reports wrongly")
	}
	c.Advance(4 * time.Second)
	want := "[a@1s b@2s b2@2s set-by-c@4s]"
	if got := fmt.Sprint(order); got != want {
		t.Fatalf("timers ran %s, want %s", got, want)
	}
	if c.Now() != time.Unix(4, 0) {
		t.Fatalf("clock at %v after Advance", c.Now())
	}
}
