package netio

import (
	"runtime"
	"testing"
)

// With Multicore the server runs a loop per processor but one, never
// none; EventLoops, when set, is taken as it is; without Multicore gnet's
// single loop.
func TestEventLoopsLeaveAProcessorToTheRest(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, c := range []struct {
		procs int
		cfg   Config
		want  int
	}{
		{1, Config{Multicore: true}, 1},
		{2, Config{Multicore: true}, 1},
		{16, Config{Multicore: true}, 15},
		{16, Config{Multicore: true, EventLoops: 16}, 16},
		{16, Config{EventLoops: 3}, 3},
		{16, Config{}, 0},
	} {
		runtime.GOMAXPROCS(c.procs)
		if got := c.cfg.eventLoops(); got != c.want {
			t.Errorf("GOMAXPROCS %d, Multicore %v, EventLoops %d: %d loops, want %d",
				c.procs, c.cfg.Multicore, c.cfg.EventLoops, got, c.want)
		}
	}
}
