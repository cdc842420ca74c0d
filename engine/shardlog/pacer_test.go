package shardlog

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// However many goroutines read through one pacer, together they read at
// its rate: 8 reads of 1 MiB at 1 MiB/s take 7 s (the first goes at once).
func TestAPacerHoldsItsReadersToItsRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := NewPacer(1 << 20)
		began := time.Now()
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for range 2 {
					if err := p.wait(1<<20, nil); err != nil {
						t.Error(err)
					}
				}
			})
		}
		wg.Wait()
		if took := time.Since(began); took != 7*time.Second {
			t.Fatalf("8 MiB at 1 MiB/s took %v, want 7s", took)
		}
	})
}

// A wait ends as soon as stop closes, with errStopped.
func TestAPacedWaitStopsWhenAsked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := NewPacer(1)
		stop := make(chan struct{})
		if err := p.wait(1<<20, stop); err != nil { // the first read goes at once
			t.Fatal(err)
		}
		done := make(chan error)
		go func() { done <- p.wait(1, stop) }()
		synctest.Wait()
		close(stop)
		if err := <-done; err != errStopped {
			t.Fatalf("stopped wait: %v", err)
		}
		if err := NewPacer(0).wait(1<<30, stop); err != errStopped {
			t.Fatalf("unpaced wait after stop: %v", err)
		}
	})
}
