package observe

import (
	"errors"
	"testing"
	"time"
)

// What the hot paths call (a flush, a sync, an ack) allocates nothing.
func TestObservingAllocatesNothing(t *testing.T) {
	r := NewRegistry()
	o := NewLogObserver(r)
	m := NewNetMetrics(r)
	failed := errors.New("EIO")
	for name, f := range map[string]func(){
		"flushed": func() { o.Flushed(64, 64<<10, true, 150*time.Microsecond) },
		"synced":  func() { o.Synced(time.Millisecond, nil) },
		"failed":  func() { o.Synced(time.Millisecond, failed) },
		"ack":     func() { m.ObserveAck(80 * time.Microsecond) },
	} {
		if a := testing.AllocsPerRun(1000, f); a > 0 {
			t.Errorf("%s: %.2f allocations per call", name, a)
		}
	}
}
