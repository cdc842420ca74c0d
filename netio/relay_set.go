package netio

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// Bounds of the relay connections.
const (
	// RelayConnsMax bounds the relay connections a server keeps, across
	// its peers: one per (peer, credential) in use. Past it the one used
	// least recently among those with no request in service is closed; when
	// every one is busy, the request is refused with overloaded. Relay
	// connections never count against Config.ConnectionsMax, nor against
	// a tenant's connection quota (the client's own connection, at its
	// ingress, does).
	RelayConnsMax = 1024
	// relayIdleNanos is how long a relay connection with nothing in
	// service stays open; the sweep closes it after.
	relayIdleNanos = int64(2 * time.Minute)
)

// relaySet is a server's relay connections: by peer, then by credential,
// and in the order of their last use, most recent first. Its mu is a
// leaf, held for a lookup or a change, never while a connection serves.
type relaySet struct {
	mu     sync.Mutex
	byPeer map[string]map[string]*relayConn
	n      int
	newest *relayConn
	oldest *relayConn
	closed bool // Stop: nothing more is kept
	max    int  // RelayConnsMax; tests lower it
}

// find returns the connection of (from, cred) and marks it used now.
// Allocates nothing.
func (rs *relaySet) find(from string, cred []byte) *relayConn {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rc := rs.byPeer[from][string(cred)]
	if rc != nil {
		rs.unlinkLocked(rc)
		rs.pushLocked(rc)
	}
	return rc
}

// insert keeps rc, unless a connection of its (peer, credential) came
// first: kept is the one to use. When the set is full the least recently
// used connection with nothing in service is evicted (the caller closes
// it); with none, or once Stop began, rc is not kept and e refuses the
// request.
func (rs *relaySet) insert(rc *relayConn) (kept, evicted *relayConn, e *wire.Error) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.closed {
		return nil, nil, errShuttingDown
	}
	if old := rs.byPeer[rc.from][rc.cred]; old != nil {
		rs.unlinkLocked(old)
		rs.pushLocked(old)
		return old, nil, nil
	}
	if rs.n >= rs.limit() {
		if evicted = rs.idlestLocked(); evicted == nil {
			return nil, nil, &wire.Error{Code: wire.CodeOverloaded, Details: wire.Details{RetryAfterMillis: 10},
				Message: "all " + strconv.Itoa(rs.limit()) + " relay connections have requests in service"}
		}
		rs.removeLocked(evicted)
	}
	if rs.byPeer == nil {
		rs.byPeer = map[string]map[string]*relayConn{}
	}
	creds := rs.byPeer[rc.from]
	if creds == nil {
		creds = map[string]*relayConn{}
		rs.byPeer[rc.from] = creds
	}
	creds[rc.cred] = rc
	rs.n++
	rs.pushLocked(rc)
	return rc, evicted, nil
}

func (rs *relaySet) limit() int {
	if rs.max > 0 {
		return rs.max
	}
	return RelayConnsMax
}

// idlestLocked is the least recently used connection with nothing in
// service, or nil.
func (rs *relaySet) idlestLocked() *relayConn {
	for rc := rs.oldest; rc != nil; rc = rc.prev {
		if rc.t.inService.Load() == 0 {
			return rc
		}
	}
	return nil
}

// remove forgets rc, if the set holds it.
func (rs *relaySet) remove(rc *relayConn) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rc.listed {
		rs.removeLocked(rc)
	}
}

func (rs *relaySet) removeLocked(rc *relayConn) {
	creds := rs.byPeer[rc.from]
	delete(creds, rc.cred)
	if len(creds) == 0 {
		delete(rs.byPeer, rc.from)
	}
	rs.n--
	rs.unlinkLocked(rc)
	rc.listed = false
}

// pushLocked puts rc first in the use order.
func (rs *relaySet) pushLocked(rc *relayConn) {
	rc.prev, rc.next = nil, rs.newest
	if rs.newest != nil {
		rs.newest.prev = rc
	}
	rs.newest = rc
	if rs.oldest == nil {
		rs.oldest = rc
	}
	rc.listed = true
}

func (rs *relaySet) unlinkLocked(rc *relayConn) {
	if rc.prev != nil {
		rc.prev.next = rc.next
	} else if rs.newest == rc {
		rs.newest = rc.next
	}
	if rc.next != nil {
		rc.next.prev = rc.prev
	} else if rs.oldest == rc {
		rs.oldest = rc.prev
	}
	rc.prev, rc.next = nil, nil
}

// all is a snapshot of the connections.
func (rs *relaySet) all() []*relayConn {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	out := make([]*relayConn, 0, rs.n)
	for rc := rs.newest; rc != nil; rc = rc.next {
		out = append(out, rc)
	}
	return out
}

// len is the number of connections kept.
func (rs *relaySet) len() int {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.n
}

// sweepRelays is the sweep's share for relay connections: it closes those
// whose token expired or whose signing key is no longer trusted (with the
// ERROR a client would get, which fails what they still hold), and those
// idle for relayIdleNanos with nothing in service, and trims their
// outboxes' kept buffers.
func (s *Server) sweepRelays(now int64) {
	for _, rc := range s.relays.all() {
		if rc.c.helloDone.Load() && rc.c.checkExpiry(now) {
			s.relays.remove(rc)
			continue
		}
		if rc.t.inService.Load() == 0 && now-rc.lastUsed.Load() >= relayIdleNanos {
			s.relays.remove(rc)
			_ = rc.t.Close()
			continue
		}
		rc.c.out.trimIdle()
	}
}

// stopRelays is Stop's end for relay connections, once the work they took
// on is answered: nothing more is kept, each is closed, and Stop waits for
// their writers (each closes its connection as it ends).
func (s *Server) stopRelays(ctx context.Context) error {
	s.relays.mu.Lock()
	s.relays.closed = true
	s.relays.mu.Unlock()
	all := s.relays.all()
	for _, rc := range all {
		s.relays.remove(rc)
		_ = rc.t.Close()
	}
	for _, rc := range all {
		select {
		case <-rc.t.writerDone:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	return nil
}
