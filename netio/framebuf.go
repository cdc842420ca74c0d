package netio

import (
	"math/bits"
	"sync"
)

// frameBuf holds the bytes of one unfinished frame (inbound.go). They come
// from pools by size class: two classes an octave (4, 6, 8, 12, 16 KiB ...),
// so a buffer is at most half again what it must hold, and growing one
// copies its bytes about twice over in all.
type frameBuf struct{ b []byte }

const (
	frameBufMinShift = 12                    // the smallest class: 4 KiB
	frameBufMinBytes = 1 << frameBufMinShift //
	frameBufClasses  = 2*(31-frameBufMinShift) + 1
)

// frameBufPools hold the buffers of finished frames for the next ones. A
// pool keeps nothing alive across two garbage collections, so what the
// frames of a burst (or an attack) took is given back to the runtime after
// it, not kept per connection.
var frameBufPools [frameBufClasses]sync.Pool

// frameBufClassBytes is the size of class i: 4 KiB, 6 KiB, 8 KiB, 12 KiB ...
func frameBufClassBytes(i int) int {
	return (2 + i&1) << (frameBufMinShift - 1 + i>>1)
}

// frameBufClassFor is the smallest class that holds n bytes.
func frameBufClassFor(n int) int {
	if n <= frameBufMinBytes {
		return 0
	}
	p := bits.Len(uint(n - 1)) // 1<<(p-1) < n <= 1<<p
	if n <= 3<<(p-2) {
		return 2*(p-1-frameBufMinShift) + 1
	}
	return 2 * (p - frameBufMinShift)
}

// frameBufClassOf is the largest class a buffer of capacity c can serve.
func frameBufClassOf(c int) int {
	i := frameBufClassFor(c)
	if frameBufClassBytes(i) > c {
		i--
	}
	return i
}

// getFrameBuf returns an empty buffer of at least n bytes (exactly n when
// the pool has none: ask for a class's size, frameBufClassBytes, to be
// served from the pool), n at most 2 GiB - 1 (the frame limit's ceiling).
func getFrameBuf(n int) *frameBuf {
	if fb, ok := frameBufPools[frameBufClassFor(n)].Get().(*frameBuf); ok {
		return fb
	}
	return &frameBuf{b: make([]byte, 0, n)}
}

// putFrameBuf gives a buffer back; nothing may use it after.
func putFrameBuf(fb *frameBuf) {
	fb.b = fb.b[:0]
	if c := cap(fb.b); c >= frameBufMinBytes {
		frameBufPools[frameBufClassOf(c)].Put(fb)
	}
}
