package group

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// Eight consumers poll (waiting when idle), ack and nack at once, while
// records are published. Claims never lapse here, so a record is held by
// one consumer at a time, from the poll that hands it out to the ack or
// nack that gives it back; every record is acked once and the cursor
// reaches the end.
func TestConcurrentConsumersNeverShareAClaim(t *testing.T) {
	const records, consumers = 3000, 8
	f := newFixture(t, Options{Visibility: time.Hour, MaxDeliveries: -1, WindowRecords: 256})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := &claimLedger{holder: map[int64]string{}, acked: map[int64]bool{}}
	var wg sync.WaitGroup
	for i := range consumers {
		name, rng := fmt.Sprint("c", i), rand.New(rand.NewPCG(uint64(i), 1))
		wg.Go(func() {
			for ctx.Err() == nil {
				ds, err := f.m.Poll(ctx, PollRequest{Key: key("g"), Consumer: name, Max: 1 + rng.IntN(20), Wait: time.Minute})
				if errors.Is(err, context.Canceled) {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				ack, nack := m.take(t, name, ds, rng)
				m.release(nack)
				m.release(ack)
				if len(nack) > 0 {
					if err := f.m.Nack(key("g"), name, nack, 0); err != nil {
						t.Error(err)
					}
				}
				if len(ack) > 0 {
					if err := f.m.Ack(key("g"), name, ack); err != nil {
						t.Error(err)
					}
				}
				if m.count() == records {
					cancel()
				}
			}
		})
	}
	for range records / 100 {
		f.publish(100)
	}
	wg.Wait()
	if d := f.describe("g"); d.Cursor != records || d.Acked != records || d.InFlight != 0 || d.Owed != 0 {
		t.Fatalf("%+v", d)
	}
}

// claimLedger is who holds what, as the consumers know it.
type claimLedger struct {
	mu     sync.Mutex
	holder map[int64]string
	acked  map[int64]bool
}

// take checks a poll's deliveries against the ledger, records their
// holder, and decides, for each, ack or nack.
func (l *claimLedger) take(t *testing.T, who string, ds []Delivery, rng *rand.Rand) (ack, nack []int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, d := range ds {
		if h, ok := l.holder[d.Offset]; ok {
			t.Errorf("record %d handed to %s while %s holds it", d.Offset, who, h)
		}
		if l.acked[d.Offset] {
			t.Errorf("record %d handed to %s after it was acked", d.Offset, who)
		}
		l.holder[d.Offset] = who
	}
	for _, d := range ds {
		if rng.IntN(5) == 0 {
			nack = append(nack, d.Offset)
		} else {
			ack = append(ack, d.Offset)
			l.acked[d.Offset] = true
		}
	}
	return ack, nack
}

// release gives records back in the ledger, just before they are given
// back to the group.
func (l *claimLedger) release(offsets []int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, o := range offsets {
		delete(l.holder, o)
	}
}

func (l *claimLedger) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.acked)
}
