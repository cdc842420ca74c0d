package netio

import (
	"strconv"

	"github.com/felixbroker/felix/netio/wire"
)

// admitConn takes a connection slot for a connection about to be served, or
// returns the ERROR frame (overloaded, request id 0) that refuses it when
// Config.ConnectionsMax are open. The slot is taken before anything is
// allocated for the connection, with auth on or off (the tenants'
// connection quotas count only authenticated connections, at HELLO);
// closeConn gives it back. Both listeners call it; any goroutine.
func (s *Server) admitConn() []byte {
	if s.connSlots.Add(1) <= int64(s.cfg.ConnectionsMax) {
		return nil
	}
	s.connSlots.Add(-1)
	s.cfg.Metrics.ConnectionsRefused.Add(1)
	return wire.AppendError(nil, 0, &wire.Error{Code: wire.CodeOverloaded,
		Message: "the broker serves its maximum of " + strconv.Itoa(s.cfg.ConnectionsMax) + " connections"})
}

// releaseSlot gives back the slot admitConn took, when the connection closes.
func (s *Server) releaseSlot() { s.connSlots.Add(-1) }
