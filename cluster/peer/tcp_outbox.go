package peer

import "sync"

// outbox is one served connection's answers on their way to its socket,
// in the order they were given. Answers gather in buf while a write is
// under way (writing) or while the reader handles a read (inTraffic,
// which writes them on its way out): a burst of answers becomes one
// write.
//
// Whoever finds nothing on its way to the socket writes, once and
// without waiting (sock.tryWrite): the reader at the end of a read, or
// the goroutine that gives an answer later (a log's committer, say). No
// hand-off, nothing allocated. What the socket does not take then, and
// what gathers during that write, goes to the connection's writer, which
// waits for the socket (at most WriteTimeout) and writes until nothing is
// left.
//
// What is taken for a write and what waits here are bounded together by
// backlogMax: past it the peer is not reading, and the connection is
// closed (its requests then fail at the peer as outcome unknown).
type outbox struct {
	s          servedSocket
	backlogMax int
	closeConn  func()        // ends the connection (serverConn.close)
	kick       chan struct{} // capacity 1: wakes the writer
	stop       chan struct{} // closed once the connection is: the writer returns

	mu         sync.Mutex
	buf        []byte // answers not yet taken for a write
	spare      []byte
	held       int  // the bytes taken for the write under way
	writing    bool // a write is under way: a direct one or the writer's
	inTraffic  bool
	closeAfter bool // close once everything is written
	closed     bool
	waited     uint64 // writes the writer made, for tests
}

// answerBacklogBytesMax is the backlog a connection may hold before it is
// taken for a peer that does not read.
func answerBacklogBytesMax(frameBytesMax int) int { return 2*frameBytesMax + 4<<20 }

func (o *outbox) init(s servedSocket, backlogMax int, closeConn func()) {
	o.s, o.backlogMax, o.closeConn = s, backlogMax, closeConn
	o.kick, o.stop = make(chan struct{}, 1), make(chan struct{})
}

// send appends frame under the request's id and sees it written. Any
// goroutine; never blocks.
func (o *outbox) send(id uint64, frame []byte) error {
	o.mu.Lock()
	if o.closed || o.closeAfter {
		o.mu.Unlock()
		return ErrClosed
	}
	o.buf = appendWithID(o.buf, frame, id)
	if len(o.buf)+o.held > o.backlogMax {
		o.closeLocked()
		o.mu.Unlock()
		o.closeConn()
		return ErrClosed
	}
	if o.writing || o.inTraffic {
		o.mu.Unlock()
		return nil
	}
	o.writeLocked()
	return nil
}

// writeLocked writes buf once, without waiting, on the calling goroutine;
// what the socket does not take, and what gathers meanwhile, is the
// writer's. mu is held, nothing else is being written and buf is not
// empty; it unlocks.
func (o *outbox) writeLocked() {
	o.writing = true
	out := o.takeLocked()
	o.mu.Unlock()
	n, err := o.s.tryWrite(out)
	o.mu.Lock()
	o.held = 0
	switch {
	case o.closed:
		o.mu.Unlock()
	case err != nil:
		o.closeLocked()
		o.mu.Unlock()
		o.closeConn()
	case n < len(out):
		gathered := o.buf
		o.buf = append(out[:copy(out, out[n:])], gathered...)
		o.recycleLocked(gathered)
		o.mu.Unlock()
		o.wakeWriter()
	default:
		o.recycleLocked(out)
		o.settleLocked()
	}
}

// settleLocked ends a write that took everything it was given: the writer
// takes what gathered meanwhile, or the connection is idle again (and
// closed, if it was to close once written). Unlocks.
func (o *outbox) settleLocked() {
	if len(o.buf) > 0 {
		o.mu.Unlock()
		o.wakeWriter()
		return
	}
	o.writing = false
	o.closeIfAskedLocked()
}

// closeIfAskedLocked closes the connection, everything written, if it was
// to close then. Unlocks.
func (o *outbox) closeIfAskedLocked() {
	shut := o.closeAfter && !o.closed
	if shut {
		o.closeLocked()
	}
	o.mu.Unlock()
	if shut {
		o.closeConn()
	}
}

func (o *outbox) wakeWriter() {
	select {
	case o.kick <- struct{}{}:
	default:
	}
}

// writer is the connection's writer goroutine: woken when a write left
// answers waiting, it writes them, waiting for the socket, until none is
// left; it returns once the connection is closed.
func (o *outbox) writer() {
	for {
		select {
		case <-o.kick:
		case <-o.stop:
			return
		}
		o.mu.Lock()
		for !o.closed && len(o.buf) > 0 {
			out := o.takeLocked()
			o.waited++
			o.mu.Unlock()
			_, err := o.s.write(out)
			o.mu.Lock()
			o.held = 0
			o.recycleLocked(out)
			if err != nil && !o.closed {
				o.closeLocked()
				o.mu.Unlock()
				o.closeConn()
				return
			}
		}
		if o.closed {
			o.mu.Unlock()
			return
		}
		o.settleLocked()
	}
}

// takeLocked takes buf for writing and puts the spare in its place.
func (o *outbox) takeLocked() []byte {
	b := o.buf
	o.buf, o.spare = o.spare[:0], nil
	o.held = len(b)
	return b
}

// recycleLocked keeps a written buffer as the spare.
func (o *outbox) recycleLocked(b []byte) {
	if o.spare == nil && cap(b) <= spareKeepBytes && !o.closed {
		o.spare = b[:0]
	}
}

func (o *outbox) beginTraffic() {
	o.mu.Lock()
	o.inTraffic = true
	o.mu.Unlock()
}

// endTraffic writes what was answered during a read (and meanwhile),
// unless a write is under way: its writer takes it.
func (o *outbox) endTraffic() {
	o.mu.Lock()
	o.inTraffic = false
	switch {
	case o.closed || o.writing:
		o.mu.Unlock()
	case len(o.buf) > 0:
		o.writeLocked()
	default:
		o.closeIfAskedLocked()
	}
}

// closeAfterFlush closes the connection once everything given so far is
// written; nothing given later is.
func (o *outbox) closeAfterFlush() {
	o.mu.Lock()
	o.closeAfter = true
	switch {
	case o.closed || o.writing || o.inTraffic: // endTraffic or the write's end closes it
		o.mu.Unlock()
	case len(o.buf) > 0:
		o.writeLocked()
	default:
		o.closeIfAskedLocked()
	}
}

// markClosed is the connection's end: answers are dropped from here on.
func (o *outbox) markClosed() {
	o.mu.Lock()
	o.closeLocked()
	o.mu.Unlock()
}

func (o *outbox) closeLocked() {
	if o.closed {
		return
	}
	o.closed = true
	o.buf, o.spare = nil, nil
	close(o.stop)
}
