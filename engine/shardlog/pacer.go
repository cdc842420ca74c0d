package shardlog

import (
	"io"
	"sync"
	"time"
)

// DefaultVerifyBytesPerSecond is the rate at which the logs of a process
// verify their sealed segments in the background, all together, unless
// Options.VerifyPacer says otherwise: 10 GiB in 80 s, while leaving most
// of a disk's read bandwidth (and the CPU of a small machine) to serving.
const DefaultVerifyBytesPerSecond = 128 << 20

// defaultPacer is shared by every log opened without a VerifyPacer, so
// that a broker of many shards verifies at one rate, not one per shard.
var defaultPacer = NewPacer(DefaultVerifyBytesPerSecond)

// Pacer bounds the rate of the reads it is asked to pace, whatever number
// of goroutines ask: each read reserves the next slot of the schedule and
// waits for it. Idle time earns no credit, so a burst is one read. Safe for
// concurrent use.
type Pacer struct {
	bytesPerSecond int64

	mu   sync.Mutex
	next time.Time // when the reads reserved so far are spent at the rate
}

// NewPacer returns a pacer at bytesPerSecond; zero or less does not pace.
func NewPacer(bytesPerSecond int64) *Pacer {
	return &Pacer{bytesPerSecond: bytesPerSecond}
}

// wait returns once n more bytes may be read at the pacer's rate, or
// errStopped as soon as stop is closed.
func (p *Pacer) wait(n int, stop <-chan struct{}) error {
	d := p.reserve(n)
	if d <= 0 {
		select {
		case <-stop:
			return errStopped
		default:
			return nil
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-stop:
		return errStopped
	}
}

// reserve books n bytes and returns how long to wait before reading them.
func (p *Pacer) reserve(n int) time.Duration {
	if p.bytesPerSecond <= 0 {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if p.next.Before(now) {
		p.next = now
	}
	at := p.next
	p.next = at.Add(time.Duration(int64(n) * int64(time.Second) / p.bytesPerSecond))
	return at.Sub(now)
}

// pacedReader reads through a pacer and stops reading once stop is closed.
type pacedReader struct {
	r     io.ReaderAt
	pacer *Pacer
	stop  <-chan struct{}
}

func (r pacedReader) ReadAt(p []byte, off int64) (int, error) {
	if err := r.pacer.wait(len(p), r.stop); err != nil {
		return 0, err
	}
	return r.r.ReadAt(p, off)
}
