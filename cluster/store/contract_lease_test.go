package store

import (
	"testing"
	"time"
)

func testLeaseLifecycle(t *testing.T, h harness) {
	s := h.store
	l := grant(t, s, 1500*time.Millisecond)
	if l.ID == NoLease || l.TTL < 2*time.Second || l.TTL%time.Second != 0 {
		t.Fatalf("a 1.5 s grant: %+v, want whole seconds, at least 2", l)
	}
	ttl, err := s.KeepAlive(deadline(t), l.ID)
	if err != nil || ttl != l.TTL {
		t.Fatalf("keepalive: %v, %v; want %v", ttl, err, l.TTL)
	}
	if err := s.Revoke(deadline(t), l.ID); err != nil {
		t.Fatal(err)
	}
	_, err = s.KeepAlive(deadline(t), l.ID)
	wantErr(t, err, ErrLeaseNotFound)
	wantErr(t, s.Revoke(deadline(t), l.ID), ErrLeaseNotFound)
	_, err = s.Txn(deadline(t), Txn{Then: []Op{PutWithLease("k", nil, l.ID)}})
	wantErr(t, err, ErrLeaseNotFound)
	for _, bad := range []time.Duration{0, -time.Second, leaseTTLMax + time.Second} {
		if _, err := s.Grant(deadline(t), bad); !isInvalid(err) {
			t.Errorf("a grant of %v: %v, want ErrInvalid", bad, err)
		}
	}
}

func testRevokeDeletesKeys(t *testing.T, h harness) {
	s := h.store
	l := grant(t, s, time.Minute)
	txn(t, s, Txn{Then: []Op{PutWithLease("l/b", nil, l.ID), PutWithLease("l/a", nil, l.ID), Put("l/kept", nil)}})
	put(t, s, "l/c", "")
	txn(t, s, Txn{Then: []Op{PutWithLease("l/c", nil, l.ID)}}) // attached by a later put
	txn(t, s, Txn{Then: []Op{Put("l/b", nil)}})                // detached by a later put
	if kv := get(t, s, "l/a"); kv.Lease != l.ID {
		t.Fatalf("a leased key reads %+v", kv)
	}
	w := watch(t, s, "l/", revision(t, s)+1)
	if err := s.Revoke(deadline(t), l.ID); err != nil {
		t.Fatal(err)
	}
	got := events(t, w, 2)
	if got[0].KV.Key != "l/a" || got[1].KV.Key != "l/c" || got[0].Revision() != got[1].Revision() ||
		got[0].Kind != EventDelete || got[1].Kind != EventDelete {
		t.Fatalf("revoke's events: %+v", got)
	}
	kvs, _, _ := s.Range(deadline(t), "l/")
	if keys := keysOf(kvs); len(keys) != 2 || keys[0] != "l/b" || keys[1] != "l/kept" {
		t.Fatalf("after revoke: %v", keys)
	}
}

func testLeaseExpiry(t *testing.T, h harness) {
	s := h.store
	short := grant(t, s, time.Second)
	long := grant(t, s, time.Minute)
	rev := txn(t, s, Txn{Then: []Op{PutWithLease("e/short", []byte("x"), short.ID), PutWithLease("e/long", nil, long.ID)}}).Revision
	w := watch(t, s, "e/", rev+1)
	h.elapse(short.TTL + time.Second)
	ev := events(t, w, 1)[0]
	if ev.Kind != EventDelete || ev.KV.Key != "e/short" || ev.Revision() <= rev {
		t.Fatalf("the expiry event: %+v", ev)
	}
	if get(t, s, "e/short").Exists() || !get(t, s, "e/long").Exists() {
		t.Fatal("expiry deleted the wrong keys")
	}
	_, err := s.KeepAlive(deadline(t), short.ID)
	wantErr(t, err, ErrLeaseNotFound)
}
