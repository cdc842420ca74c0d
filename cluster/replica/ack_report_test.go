package replica

import (
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/felixbroker/felix/cluster/peer"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/netio/wire"
	"github.com/felixbroker/felix/segment/vfs"
)

// OnAck is told of every append acknowledged OK, with its offsets, its
// generation, the time the lease was found valid and the window it held
// to; an append refused once the lease lapsed is not reported.
func TestEveryAcknowledgementIsReportedWithItsLeaseWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const lease = 2 * time.Second
		var mu sync.Mutex
		var got []AckReport
		onAck := func(a AckReport) {
			mu.Lock()
			defer mu.Unlock()
			a.Ref = cloneRef(a.Ref)
			got = append(got, a)
		}
		l, grant := startLoneLeader(t, 3, onAck)
		sent := time.Now()
		grant(sent, lease)
		first := appendAndWait(t, l, "one", "two")
		if err := appendAndWaitErr(l, "three"); err != nil {
			t.Fatalf("an append within the lease: %v", err)
		}
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n != 2 {
			t.Fatalf("%d acks reported, want 2: %+v", n, got)
		}
		want := AckReport{Generation: 3, First: first, Last: first + 1, At: got[0].At, Until: sent.Add(AckWindow(lease)), Lease: lease}
		if a := got[0]; a.Generation != want.Generation || a.First != want.First || a.Last != want.Last ||
			!a.Until.Equal(want.Until) || a.Lease != want.Lease || a.At.Before(sent) || !a.At.Before(a.Until) ||
			string(a.Ref.Name) != "s" || a.Ref.Shard != 1 {
			t.Fatalf("the first ack reported %+v, want %+v of shard s/1", a, want)
		}
		if a := got[1]; a.First != first+2 || a.Last != first+2 {
			t.Fatalf("the second ack reported offsets %d..%d, want %d", a.First, a.Last, first+2)
		}
		time.Sleep(AckWindow(lease)) // fake time: the lease's window passes, no renewal comes
		if err := appendAndWaitErr(l, "late"); !errors.Is(err, ErrUnvouched) {
			t.Fatalf("an append after the lease lapsed: %v, want ErrUnvouched", err)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(got) != 2 {
			t.Fatalf("an append refused was reported: %+v", got[2:])
		}
	})
}

// startLoneLeader leads a log of no followers (consistency Leader) on a
// memory disk at generation gen, with onAck; grant leases it.
func startLoneLeader(t *testing.T, gen uint32, onAck func(AckReport)) (*Leader, func(sent time.Time, d time.Duration)) {
	t.Helper()
	log, err := shardlog.Open(shardlog.Options{FS: vfs.NewMem(), Dir: "/s/1", Fsync: shardlog.OnCommit(), SegmentBytes: 1 << 20, BufferBytes: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	network := peer.NewNetwork(peer.NetworkOptions{Seed: 1})
	tr, err := network.Join("a")
	if err != nil {
		t.Fatal(err)
	}
	lease := &Lease{}
	l, err := NewLeader(LeaderConfig{Ref: wire.LogRef{Kind: 1, Tenant: []byte("t"), Namespace: []byte("ns"), Name: []byte("s"), Shard: 1},
		Log: log, Generation: gen, Transport: tr, Consistency: ConsistencyLeader, Lease: lease, Timeout: time.Second, OnAck: onAck})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		l.Close()
		log.Close()
		network.Close()
	})
	return l, func(sent time.Time, d time.Duration) { lease.Grant(sent, d, uint64(gen), 1) }
}

// appendAndWait appends one entry per value and returns the first offset
// once acknowledged.
func appendAndWait(t *testing.T, l *Leader, values ...string) int64 {
	t.Helper()
	var entries []shardlog.Entry
	for _, v := range values {
		entries = append(entries, shardlog.Entry{Value: []byte(v)})
	}
	w := make(waitChan, 1)
	if _, err := l.Append(entries, 0, w); err != nil {
		t.Fatal(err)
	}
	r := <-w
	if r.err != nil {
		t.Fatalf("append of %q: %v", values, r.err)
	}
	return r.first
}

func appendAndWaitErr(l *Leader, value string) error {
	w := make(waitChan, 1)
	if _, err := l.Append([]shardlog.Entry{{Value: []byte(value)}}, 0, w); err != nil {
		return err
	}
	return (<-w).err
}
