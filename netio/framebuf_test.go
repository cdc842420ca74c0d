package netio

import "testing"

func TestFrameBufClassesHoldWhatTheyAreAskedAndAtMostHalfAgain(t *testing.T) {
	for _, n := range []int{1, 4096, 4097, 6144, 6145, 8478, 1 << 20, 1<<20 + 1, 3 << 20, 1<<31 - 1} {
		i := frameBufClassFor(n)
		size := frameBufClassBytes(i)
		if size < n || (n > frameBufMinBytes && 2*size > 3*n+2) {
			t.Errorf("%d bytes: class %d of %d bytes", n, i, size)
		}
		if i > 0 && frameBufClassBytes(i-1) >= n {
			t.Errorf("%d bytes: class %d is not the smallest", n, i)
		}
		if i >= frameBufClasses {
			t.Errorf("%d bytes: class %d past the last", n, i)
		}
	}
}

// A buffer given back serves a request of its class: one of a capacity
// between two classes goes to the lower one.
func TestAFrameBufGivenBackServesItsClass(t *testing.T) {
	for _, c := range []int{4096, 5000, 6144, 8478, 1 << 20} {
		if got := frameBufClassBytes(frameBufClassOf(c)); got > c {
			t.Errorf("a buffer of %d bytes would serve requests of %d", c, got)
		}
	}
	fb := getFrameBuf(10 << 10)
	if cap(fb.b) < 10<<10 || len(fb.b) != 0 {
		t.Fatalf("cap %d len %d", cap(fb.b), len(fb.b))
	}
	putFrameBuf(fb)
}
