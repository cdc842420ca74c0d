package e2e

import (
	"net"
	"testing"
	"time"

	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/netio/wire"
)

// On a stream replicated three ways at Quorum, a batch that skips a
// sequence is refused by the shard's leader with sequence_gap naming the
// sequence it expects, and nothing of it is stored. The client's Producer
// never skips one, so the test speaks the frames itself.
func TestAGapIsRefusedWithTheExpectedSequenceOnAReplicatedStream(t *testing.T) {
	c := startLeasedCluster(t, 3)
	cc := dialCluster(t, addrs(c.brokers...), client.WithRetryPolicy(failoverPolicy))
	s := replicatedStream(t, cc, 1)
	leader := leaderOf(t, c, cc, s, 0)
	before := shardNext(t, cc, leader, s)

	w := dialFrames(t, leader.addr())
	if f := w.call(wire.AppendHello(nil, 1, wire.Hello{VersionMin: 1, VersionMax: 1, Features: wire.FeaturesAll})); f.Type != wire.TypeHelloOK {
		t.Fatalf("HELLO answered with %v", f.Type)
	}
	ref := wire.StreamRef{Tenant: []byte(s.Tenant), Namespace: []byte(s.Namespace), Stream: []byte(s.Name)}
	var ok wire.ProducerInitOK
	if err := wire.DecodeControl(w.call(wire.AppendControl(nil, 2, &wire.ProducerInit{Stream: ref})), wire.Limits{}, &ok); err != nil {
		t.Fatal(err)
	}
	seq := wire.ProducerSeq{ProducerID: ok.ProducerID, Epoch: ok.Epoch}
	rec := []wire.Record{{Value: []byte("in-order")}}
	if f := w.call(wire.AppendPublishIdempotent(nil, 3, ref, seq, rec)); f.Type != wire.TypePublishIdempotentAck {
		t.Fatalf("sequence 0 answered with %v", f.Type)
	}
	seq.Sequence = 3
	f := w.call(wire.AppendPublishIdempotent(nil, 4, ref, seq, []wire.Record{{Value: []byte("after-a-gap")}}))
	var e wire.Error
	if f.Type != wire.TypeError || e.Decode(f, wire.Limits{}) != nil || e.Code != wire.CodeSequenceGap ||
		e.Details.ExpectedSequence == nil || *e.Details.ExpectedSequence != 1 {
		t.Fatalf("a batch at sequence 3 after 0: %v %+v, want sequence_gap expecting 1", f.Type, e)
	}
	if n := shardNext(t, cc, leader, s); n != before+1 {
		t.Fatalf("the leader's next offset is %d, want %d: the batch after the gap was stored", n, before+1)
	}
}

// frames is a connection that sends one frame and reads its answer.
type frames struct {
	t      *testing.T
	nc     net.Conn
	reader wire.Reader
	in     []byte
}

func dialFrames(t *testing.T, addr string) *frames {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &frames{t: t, nc: nc}
}

func (w *frames) call(frame []byte) wire.Frame {
	w.t.Helper()
	w.nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := w.nc.Write(frame); err != nil {
		w.t.Fatal(err)
	}
	for {
		f, need, err := w.reader.Next(w.in)
		if err != nil {
			w.t.Fatal(err)
		}
		if need == 0 {
			f.Body = append([]byte(nil), f.Body...)
			w.in = w.in[f.Size():]
			return f
		}
		buf := make([]byte, max(need, 4096))
		n, err := w.nc.Read(buf)
		w.in = append(w.in, buf[:n]...)
		if err != nil {
			w.t.Fatal(err)
		}
	}
}

// A follower of a shard replicated three ways at Quorum refuses an
// idempotent batch with not_leader naming the leader (the sequence check
// is the leader's), and nothing of it lands.
func TestANonLeaderOfAReplicatedShardNamesTheLeader(t *testing.T) {
	c := startLeasedCluster(t, 3)
	cc := dialCluster(t, addrs(c.brokers...), client.WithRetryPolicy(failoverPolicy))
	s := replicatedStream(t, cc, 1)
	leader := leaderOf(t, c, cc, s, 0)
	var follower *node
	for _, nd := range c.brokers {
		if nd != leader {
			follower = nd
		}
	}
	before := shardNext(t, cc, leader, s)
	plain, err := cc.Broker(follower.addr())
	if err != nil {
		t.Fatal(err)
	}
	_, err = plain.Producer(s).PublishBatch(testCtx(t), 0, []client.Record{{Value: []byte("at-a-follower")}})
	wantRedirect(t, "an idempotent batch at a follower", err, leader)
	if n := shardNext(t, cc, leader, s); n != before {
		t.Fatalf("the refused batch landed: the leader's next offset moved from %d to %d", before, n)
	}
}
