package sim

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// traceLinesMax bounds the lines a trace keeps (its hash covers all).
const traceLinesMax = 1 << 17

// trace is a run's event trace: what was delivered and dropped, in which
// order, the faults, the control plane's writes, every operation and ack;
// each line stamped with the fake time. Its hash is the run's identity:
// one seed, one hash. Written by the simulator's goroutine (add) and the
// brokers' (the acks, through the inbox), so guarded by mu.
type trace struct {
	mu    sync.Mutex
	start time.Time
	lines []string
	hash  uint64
	count int
}

func newTrace(start time.Time) *trace { return &trace{start: start, hash: fnv.New64a().Sum64()} }

func (t *trace) add(format string, args ...any) {
	line := strconv.FormatInt(int64(time.Since(t.start)/time.Microsecond), 10) + "us " + fmt.Sprintf(format, args...)
	t.mu.Lock()
	defer t.mu.Unlock()
	h := fnv.New64a()
	var b [8]byte
	for i := range b {
		b[i] = byte(t.hash >> (8 * i))
	}
	h.Write(b[:])
	h.Write([]byte(line))
	t.hash = h.Sum64()
	t.count++
	if len(t.lines) < traceLinesMax {
		t.lines = append(t.lines, line)
	}
}

// Hash is the hash of every line added, in order.
func (t *trace) Hash() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.hash
}

// excerpt is the lines around the first one that contains needle (the
// last lines when none does).
func (t *trace) excerpt(needle string, around int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	at := len(t.lines) - 1
	if needle != "" {
		if i := slices.IndexFunc(t.lines, func(l string) bool { return strings.Contains(l, needle) }); i >= 0 {
			at = i
		}
	}
	lo, hi := max(at-around, 0), min(at+around+1, len(t.lines))
	return strings.Join(t.lines[lo:hi], "\n")
}

func itoa(n int) string { return strconv.Itoa(n) }

// inbox carries what transport and broker goroutines hand the simulator
// (a fence's outcome, an append's acknowledgement) to its goroutine,
// which runs them after synctest.Wait, sorted by key: the order the
// goroutines ran in does not show.
type inbox struct {
	mu    sync.Mutex
	items []inboxItem
}

type inboxItem struct {
	key string
	f   func()
}

func (b *inbox) put(key string, f func()) {
	b.mu.Lock()
	b.items = append(b.items, inboxItem{key, f})
	b.mu.Unlock()
}

func (b *inbox) drain() {
	b.mu.Lock()
	items := b.items
	b.items = nil
	b.mu.Unlock()
	slices.SortStableFunc(items, func(x, y inboxItem) int { return strings.Compare(x.key, y.key) })
	for _, it := range items {
		it.f()
	}
}

func contains(list []string, s string) bool { return slices.Contains(list, s) }

func sortStrings(list []string) { slices.Sort(list) }
