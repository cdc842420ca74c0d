package peer

import (
	"context"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// Transport is one broker's end of the peer network: it sends this
// broker's requests to other brokers, matching each answer to its request
// by request id with many requests in flight per connection, and serves
// the requests other brokers send with the Handler. TCP and Mem implement
// it; every method is safe for concurrent use.
type Transport interface {
	// ID is this broker's id.
	ID() string
	// Handle sets the handler of the requests peers send; nil refuses
	// them (ERROR overloaded). Requests already handed to the old
	// handler stay its own.
	Handle(h Handler)
	// Send starts c and returns at once, never blocking: c.Done is called
	// exactly once later with the answer or the failure, unless Send
	// returns an error (always ErrNotSent; then Done is not called).
	// c.Request is copied before Send returns. The caller must not touch c
	// again until Done runs.
	Send(c *Call) error
	// Call sends req to broker `to` and waits for its answer within ctx:
	// for a free slot, the connection, and the answer. The answer's body
	// is appended to dst[:0] and the returned frame's Body aliases it
	// (pass it back as dst to reuse its memory). ctx ending abandons the
	// request: the error is ErrNotSent if it was not yet queued, else
	// ErrOutcomeUnknown; a late answer is dropped.
	Call(ctx context.Context, to string, req, dst []byte) (wire.Frame, error)
	// Close fails every request in flight (ErrClosed: ErrOutcomeUnknown
	// for those that may have been sent), stops serving peers and waits
	// for the transport's goroutines. Later calls fail with ErrClosed.
	Close() error
}

// Call is one request and, once it is done, its outcome: a caller-owned
// record, reused from one request to the next, so a request allocates
// nothing. The caller sets the exported fields before Send.
type Call struct {
	// To is the broker asked.
	To string
	// Request is one whole frame of the client protocol (netio/wire: a
	// PUBLISH under FlagKeyed, a CACHE_PUT, ...), encoded with any
	// request id: the transport writes its own into the copy it sends.
	Request []byte
	// Timeout bounds the wait for the answer from Send on; past it Done
	// gets ErrTimeout (ErrOutcomeUnknown). 0 is none: then only the
	// connection's failure or Close ends a request the peer never
	// answers. The deadline is checked every Config.TimeoutTick.
	Timeout time.Duration
	// Done receives the outcome, once per Send: the answer frame
	// (err nil; an ERROR frame is an answer) or the failure (answer
	// zero). It runs on a transport goroutine and must not block; answer
	// aliases the transport's read buffer and is valid only until Done
	// returns. Once Done runs, the call is the caller's again.
	Done func(c *Call, answer wire.Frame, err error)

	id uint64 // the request id in flight; under its link's core.mu
}

// Handler serves the requests peers send.
type Handler interface {
	// ServePeer handles one request from broker `from`. It runs on a
	// transport goroutine (for TCP, the connection's reader) and
	// must not block: it answers through r, now or later, from any
	// goroutine, exactly once. req aliases the transport's read buffer
	// and is valid only until ServePeer returns; copy what outlives it.
	ServePeer(from string, req wire.Frame, r Reply)
}

// HandlerFunc is a function as a Handler.
type HandlerFunc func(from string, req wire.Frame, r Reply)

// ServePeer calls f.
func (f HandlerFunc) ServePeer(from string, req wire.Frame, r Reply) { f(from, req, r) }

// Reply answers one request. It is a small value: copy it freely, keep it
// as long as the answer takes, use it once.
type Reply struct {
	to replier
	id uint64
}

// replier is what a Reply needs of the connection the request came on.
type replier interface {
	answer(id uint64, frame []byte) error
}

// RequestID is the id of the request this Reply answers.
func (r Reply) RequestID() uint64 { return r.id }

// Answer sends frame, one whole frame encoded with any request id (the
// transport writes the request's), as the answer. It copies frame before
// it returns and never blocks. It fails with ErrBadFrame when frame is not
// one valid frame within the asking broker's frame limit (answer an ERROR
// instead), and with ErrClosed once the connection is gone (the asking
// broker's request has failed by then: nothing to tell it).
func (r Reply) Answer(frame []byte) error { return r.to.answer(r.id, frame) }
