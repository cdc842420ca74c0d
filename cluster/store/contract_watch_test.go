package store

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// event is an Event reduced to what a watch test compares.
type event struct {
	kind EventKind
	key  string
	rev  int64
}

func (e event) String() string { return fmt.Sprintf("%v %s@%d", e.kind, e.key, e.rev) }

func reduce(evs []Event) []event {
	out := make([]event, len(evs))
	for i, e := range evs {
		out[i] = event{e.Kind, e.KV.Key, e.Revision()}
	}
	return out
}

func wantEvents(t *testing.T, got []Event, want []event) {
	t.Helper()
	r := reduce(got)
	if fmt.Sprint(r) != fmt.Sprint(want) {
		t.Fatalf("events %v, want %v", r, want)
	}
}

func testWatchOrder(t *testing.T, h harness) {
	s := h.store
	w := watch(t, s, "w/", revision(t, s)+1)
	r1 := put(t, s, "w/a", "1")
	put(t, s, "other", "")
	r2 := txn(t, s, Txn{Then: []Op{Put("w/b", []byte("2")), Put("x/c", nil), Delete("w/a")}}).Revision
	r3 := put(t, s, "w/b", "3")
	got := events(t, w, 4)
	wantEvents(t, got, []event{{EventPut, "w/a", r1}, {EventPut, "w/b", r2}, {EventDelete, "w/a", r2}, {EventPut, "w/b", r3}})
	if b := got[3].KV; string(b.Value) != "3" || b.CreateRevision != r2 || b.Version != 2 {
		t.Fatalf("a put event's KV: %+v", b)
	}
	if d := got[2].KV; d.Exists() || d.Value != nil || d.Version != 0 {
		t.Fatalf("a delete event's KV: %+v", d)
	}
}

func testWatchReplay(t *testing.T, h harness) {
	s := h.store
	r1 := put(t, s, "w/a", "1")
	r2 := put(t, s, "w/a", "2")
	r3 := txn(t, s, Txn{Then: []Op{Delete("w/a")}}).Revision
	wantEvents(t, events(t, watch(t, s, "w/", r1), 3), []event{{EventPut, "w/a", r1}, {EventPut, "w/a", r2}, {EventDelete, "w/a", r3}})
	wantEvents(t, events(t, watch(t, s, "w/", r2), 2), []event{{EventPut, "w/a", r2}, {EventDelete, "w/a", r3}})
}

func testWatchCompacted(t *testing.T, h harness) {
	s := h.store
	r1 := put(t, s, "w/a", "1")
	r2 := put(t, s, "w/a", "2")
	put(t, s, "w/a", "3")
	if err := s.Compact(deadline(t), r2); err != nil {
		t.Fatal(err)
	}
	wantErr(t, watchErr(t, watch(t, s, "w/", r1)), ErrCompacted)
	w := watch(t, s, "w/", r2)
	if got := events(t, w, 2); got[0].Revision() != r2 {
		t.Fatalf("a watch from the compaction point: %v", reduce(got))
	}
}

func testCompactBounds(t *testing.T, h harness) {
	s := h.store
	rev := put(t, s, "k", "")
	wantErr(t, s.Compact(deadline(t), rev+1), ErrFutureRevision)
	if err := s.Compact(deadline(t), rev); err != nil {
		t.Fatal(err)
	}
	wantErr(t, s.Compact(deadline(t), rev), ErrCompacted)
	if !get(t, s, "k").Exists() {
		t.Fatal("compaction lost the latest state")
	}
}

func testWatchEnds(t *testing.T, h harness) {
	s := h.store
	from := revision(t, s) + 1
	if _, err := s.Watch(deadline(t), "w/", 0); !isInvalid(err) {
		t.Fatalf("a watch from revision 0: %v", err)
	}

	w := watch(t, s, "w/", from)
	short, cancel := context.WithTimeout(deadline(t), 20*time.Millisecond)
	defer cancel()
	_, err := w.Next(short)
	wantErr(t, err, context.DeadlineExceeded)
	put(t, s, "w/a", "")
	events(t, w, 1) // a Next whose ctx ended leaves the watch going
	w.Close()
	wantErr(t, watchErr(t, w), ErrClosed)

	ctx, cancelWatch := context.WithCancel(deadline(t))
	w2, err := s.Watch(ctx, "w/", from)
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	events(t, w2, 1)
	cancelWatch()
	wantErr(t, watchErr(t, w2), context.Canceled)
}
