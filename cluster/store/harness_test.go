package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

// harness is one store under test and how to let time pass for its leases.
type harness struct {
	store Store
	// elapse lets d pass for the store's leases: the in-memory store's
	// clock moves (and what falls due happens before it returns); for etcd
	// real time passes on its own and elapse does nothing, so a test then
	// waits for the event, with a deadline.
	elapse func(d time.Duration)
}

type newHarness func(t *testing.T) harness

// waitMax bounds every wait for an event; a test that reaches it fails.
const waitMax = 30 * time.Second

func memoryHarness(t *testing.T) harness {
	clock := NewManualClock(time.Unix(1_000_000, 0))
	s := NewMemory(MemoryConfig{Clock: clock})
	t.Cleanup(func() { s.Close() })
	return harness{store: s, elapse: clock.Advance}
}

// testEmbedConfig is a fast single member: 10 ms ticks, no fsync.
func testEmbedConfig(t testing.TB) EmbedConfig {
	return EmbedConfig{Dir: t.TempDir(), TickMs: 10, ElectionMs: 100, UnsafeNoFsync: true}
}

func startEmbedded(t testing.TB) *Embedded {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitMax)
	defer cancel()
	m, err := StartEmbedded(ctx, testEmbedConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func embeddedHarness(t *testing.T) harness {
	return harness{store: startEmbedded(t).Store(), elapse: func(time.Duration) {}}
}

// dialedHarness is a client over gRPC on loopback, in a namespace, as a
// broker given --etcd-endpoints runs.
func dialedHarness(t *testing.T) harness {
	m := startEmbedded(t)
	s, err := Dial(deadline(t), DialConfig{Endpoints: []string{m.ClientURL()}, Prefix: "/felix-test/"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() }) // runs before m's Close: clients first
	return harness{store: s, elapse: func(time.Duration) {}}
}

// deadline is a context that ends the test's waits at waitMax.
func deadline(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitMax)
	t.Cleanup(cancel)
	return ctx
}

func txn(t testing.TB, s Store, tx Txn) TxnResult {
	t.Helper()
	res, err := s.Txn(deadline(t), tx)
	if err != nil {
		t.Fatalf("txn: %v", err)
	}
	return res
}

// put writes key and returns the revision of the write.
func put(t testing.TB, s Store, key, value string) int64 {
	t.Helper()
	res := txn(t, s, Txn{Then: []Op{Put(key, []byte(value))}})
	if !res.Succeeded {
		t.Fatalf("an unconditional put of %q did not succeed", key)
	}
	return res.Revision
}

func get(t testing.TB, s Store, key string) KV {
	t.Helper()
	kv, _, err := s.Get(deadline(t), key)
	if err != nil {
		t.Fatalf("get %q: %v", key, err)
	}
	return kv
}

func revision(t testing.TB, s Store) int64 {
	t.Helper()
	_, rev, err := s.Get(deadline(t), "revision-probe")
	if err != nil {
		t.Fatal(err)
	}
	return rev
}

func grant(t testing.TB, s Store, ttl time.Duration) Lease {
	t.Helper()
	l, err := s.Grant(deadline(t), ttl)
	if err != nil {
		t.Fatalf("grant %v: %v", ttl, err)
	}
	return l
}

func watch(t testing.TB, s Store, prefix string, from int64) Watch {
	t.Helper()
	w, err := s.Watch(deadline(t), prefix, from)
	if err != nil {
		t.Fatalf("watch %q from %d: %v", prefix, from, err)
	}
	t.Cleanup(w.Close)
	return w
}

// events reads from w until it has n events, failing at waitMax.
func events(t testing.TB, w Watch, n int) []Event {
	t.Helper()
	ctx := deadline(t)
	var got []Event
	for len(got) < n {
		batch, err := w.Next(ctx)
		if err != nil {
			t.Fatalf("after %d of %d events: %v", len(got), n, err)
		}
		got = append(got, batch...)
	}
	if len(got) != n {
		t.Fatalf("got %d events, want %d: %v", len(got), n, got)
	}
	return got
}

// nextBatch reads one batch from w, failing at waitMax.
func nextBatch(t testing.TB, w Watch) []Event {
	t.Helper()
	batch, err := w.Next(deadline(t))
	if err != nil {
		t.Fatal(err)
	}
	return batch
}

// watchErr reads from w until it ends, and returns why.
func watchErr(t testing.TB, w Watch) error {
	t.Helper()
	ctx := deadline(t)
	for {
		if _, err := w.Next(ctx); err != nil {
			if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
				t.Fatal("the watch did not end within", waitMax)
			}
			return err
		}
	}
}

func wantErr(t testing.TB, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("error %v, want %v", err, want)
	}
}
