package replica

import (
	"testing"
	"time"
)

// A leadership deposed or replaced revokes the lease of its own
// generation only: a lease already granted for the next one is another
// leadership's. (Found by sim seed 181: a broker that led a shard at
// generation 1 was granted generation 2 before it was named leader there,
// and ending the generation-1 leadership revoked the new lease, so the
// shard's leader acknowledged nothing, for good.)
func TestRevokingAnOlderGenerationLeavesTheLeaseOfTheNext(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var l Lease
	if !l.Grant(t0, time.Second, 1, 1) || !l.Valid(t0, 1) {
		t.Fatal("granted generation 1: not valid")
	}
	l.Grant(t0, time.Second, 2, 1)
	l.Revoke(1)
	if !l.Valid(t0, 2) {
		t.Fatal("revoking generation 1 ended generation 2's lease")
	}
	l.Revoke(2)
	if l.Valid(t0, 2) {
		t.Fatal("revoked generation 2: still valid")
	}
	l.Grant(t0, time.Second, 2, 1)
	if l.Valid(t0, 2) {
		t.Fatal("a grant at the revoked generation revived it")
	}
	l.Grant(t0, time.Second, 3, 1)
	if !l.Valid(t0, 3) {
		t.Fatal("a grant at the next generation: not valid")
	}
}
