package replica

import (
	"sync"

	"github.com/felixbroker/felix/cluster/peer"
	"github.com/felixbroker/felix/netio/wire"
)

// replicateReply answers one REPLICATE, once, with a REPLICATE_ACK
// encoded into its own buffer, and goes back to its node's free list as
// it answers. Its func is made once with it, so a REPLICATE's answer
// allocates nothing.
type replicateReply struct {
	free *replyList
	r    peer.Reply
	buf  []byte
	fn   func(wire.ReplicateAck)
	next *replicateReply // on the free list
}

// replyList is a node's free replicateReplies, a stack. It holds as many
// as the node's REPLICATEs ever waited for their answers at once (each
// peer bounds its requests in flight: peer.Config.InflightMax), and never
// shrinks: unlike a sync.Pool, which a GC empties, what it holds stays
// made, and a steady stream of REPLICATEs allocates none. The zero value
// is empty and ready.
type replyList struct {
	mu   sync.Mutex
	head *replicateReply
}

// get takes a reply off the list, or makes one.
func (l *replyList) get(r peer.Reply) *replicateReply {
	l.mu.Lock()
	rr := l.head
	if rr != nil {
		l.head, rr.next = rr.next, nil
	}
	l.mu.Unlock()
	if rr == nil {
		rr = &replicateReply{free: l, buf: make([]byte, 0, 64)}
		rr.fn = rr.answer
	}
	rr.r = r
	return rr
}

// put gives rr back unanswered (the follower refused the REPLICATE whole).
func (l *replyList) put(rr *replicateReply) {
	rr.r = peer.Reply{}
	l.mu.Lock()
	rr.next, l.head = l.head, rr
	l.mu.Unlock()
}

func (rr *replicateReply) answer(a wire.ReplicateAck) {
	rr.buf = wire.AppendReplicateAck(rr.buf[:0], rr.r.RequestID(), a)
	_ = rr.r.Answer(rr.buf) // it copies the frame before it returns
	rr.free.put(rr)
}
