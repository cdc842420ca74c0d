package ring

import "testing"

// allocRuns is enough runs that a single stray allocation per run shows.
const allocRuns = 500

func TestSubmitAllocatesNothing(t *testing.T) {
	forEachDriver(t, Config{Entries: 16}, func(t *testing.T, d Driver) {
		_, fd := tempFile(t, t.TempDir())
		done := make(chan struct{}, 4)
		signal := func(*Completion) { done <- struct{}{} }
		bufs := make([][]byte, MaxIovecs) // spreads over every Pinner of a slot
		for i := range bufs {
			bufs[i] = make([]byte, 64)
		}
		batch := []*Completion{
			{Op: OpWrite, FD: fd, Buf: make([]byte, 4096), Link: true, Done: signal},
			{Op: OpWritev, FD: fd, Off: 4096, Bufs: bufs, Link: true, Done: signal},
			{Op: OpFdatasync, FD: fd, Done: signal},
			{Op: OpRead, FD: fd, Buf: make([]byte, 4096), Done: signal},
		}
		allocs := testing.AllocsPerRun(allocRuns, func() {
			if err := d.Submit(batch); err != nil {
				t.Fatal(err)
			}
			for range batch {
				<-done
			}
		})
		if allocs != 0 {
			t.Fatalf("%v allocations per Submit and completion", allocs)
		}
	})
}

func TestSyncHelpersAllocateNothing(t *testing.T) {
	forEachDriver(t, Config{}, func(t *testing.T, d Driver) {
		_, fd := tempFile(t, t.TempDir())
		p := make([]byte, 4096)
		helpers := []struct {
			name string
			fn   func()
		}{
			{"WriteAt", func() { mustN(t, len(p))(WriteAt(d, fd, p, 0)) }},
			{"ReadAt", func() { mustN(t, len(p))(ReadAt(d, fd, p, 0)) }},
			{"WriteAtSync", func() { mustN(t, len(p))(WriteAtSync(d, fd, p, 4096)) }},
			{"Fdatasync", func() { mustN(t, 0)(0, Fdatasync(d, fd)) }},
		}
		for _, h := range helpers {
			if allocs := testing.AllocsPerRun(allocRuns, h.fn); allocs != 0 {
				t.Errorf("%s: %v allocations per call", h.name, allocs)
			}
		}
	})
}

func mustN(t *testing.T, want int) func(int, error) {
	return func(n int, err error) {
		if n != want || err != nil {
			t.Fatalf("= %d, %v; want %d", n, err, want)
		}
	}
}
