package client

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// Read buffer sizes: the buffer starts small, grows to hold the largest
// frame (bounded by the frame limit, which wire.Reader checks first), and
// goes back to the initial size once a large frame has been handled.
const (
	readBufInitialBytes = 64 << 10
	readBufKeepBytes    = 1 << 20
)

// readLoop is the connection's only reader: it finds frames with
// wire.Reader and dispatches each before reading on. Frames alias buf, so
// everything kept past dispatch is copied.
func (c *conn) readLoop(rest []byte) {
	buf := make([]byte, max(readBufInitialBytes, len(rest)))
	end := copy(buf, rest)
	start := 0
	r := wire.Reader{Limits: c.readLimits}
	for {
		f, need, err := r.Next(buf[start:end])
		if err != nil {
			c.die(fmt.Errorf("%w: %w", ErrProtocol, err))
			return
		}
		if need == 0 {
			if err := c.dispatch(f); err != nil {
				c.die(err)
				return
			}
			start += f.Size()
			continue
		}
		buf, start, end = makeRoom(buf, start, end, need)
		n, err := c.nc.Read(buf[end:])
		end += n
		if n > 0 {
			c.lastRead.Store(time.Now().UnixNano())
		}
		if err != nil {
			c.die(readErr(err))
			return
		}
	}
}

// makeRoom moves the unread bytes buf[start:end] to the front and makes
// sure at least need more fit after them.
func makeRoom(buf []byte, start, end, need int) ([]byte, int, int) {
	unread := end - start
	if unread == 0 && len(buf) > readBufKeepBytes {
		buf = make([]byte, readBufInitialBytes)
	}
	if unread+need > len(buf) {
		nb := make([]byte, max(unread+need, 2*len(buf)))
		copy(nb, buf[start:end])
		return nb, 0, unread
	}
	if start > 0 {
		copy(buf, buf[start:end])
	}
	return buf, 0, unread
}

func readErr(err error) error {
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: the broker closed the connection", ErrConnectionLost)
	}
	return fmt.Errorf("%w: %w", ErrConnectionLost, err)
}

// dispatch handles one frame; an error ends the connection.
func (c *conn) dispatch(f wire.Frame) error {
	switch f.Type {
	case wire.TypePublishAck:
		return c.onPublishAck(f)
	case wire.TypeError:
		return c.onError(f)
	case wire.TypeEventBatch:
		return c.onEventBatch(f)
	case wire.TypeSubscriptionEnded:
		return c.onSubscriptionEnded(f)
	case wire.TypeSubscriptionAtEnd:
		return c.onSubscriptionAtEnd(f)
	case wire.TypeSubscribed:
		return c.onSubscribed(f)
	case wire.TypePing:
		return c.onPing(f)
	}
	if h := frameHooks[f.Type]; h != nil {
		return h(c, f)
	}
	return c.onAnswer(f)
}

// frameHooks dispatch the frames of optional features (cache watches:
// watch_conn.go), registered from their files' init funcs.
var frameHooks = map[wire.Type]func(*conn, wire.Frame) error{}

func (c *conn) onPublishAck(f wire.Frame) error {
	var a wire.PublishAck
	if err := a.Decode(f, c.readLimits); err != nil {
		return fmt.Errorf("%w: PUBLISH_ACK: %w", ErrProtocol, err)
	}
	c.mu.Lock()
	cl := c.calls[f.RequestID]
	if cl == nil {
		c.mu.Unlock()
		return nil // an answer nobody awaits (an ack for AckNone)
	}
	for i := range a.Len() {
		run := a.Run(i)
		cl.runs = append(cl.runs, run)
		cl.got += uint64(run.Count)
	}
	done := cl.got >= cl.want
	if done {
		delete(c.calls, f.RequestID)
	}
	c.mu.Unlock()
	if done {
		var err error
		if cl.got > cl.want {
			err = fmt.Errorf("%w: acknowledgements for %d records of a publish of %d", ErrProtocol, cl.got, cl.want)
		}
		c.finish(cl, err)
	}
	return nil
}

func (c *conn) onError(f wire.Frame) error {
	var we wire.Error
	if err := we.Decode(f, c.readLimits); err != nil {
		return fmt.Errorf("%w: ERROR: %w", ErrProtocol, err)
	}
	se := serverErrorFrom(&we)
	if f.RequestID == 0 {
		c.mu.Lock()
		c.brokerErr = se
		c.mu.Unlock()
		c.opts.logger.Warn("felix broker error on the connection", "broker", c.brokerID, "err", se)
		return nil
	}
	cl := c.take(f.RequestID)
	if cl == nil {
		c.asyncError(se)
		return nil
	}
	c.finish(cl, se)
	return nil
}

// asyncError reports a refusal nobody waits for (a publish sent with
// AckNone).
func (c *conn) asyncError(err error) {
	if h := c.opts.onAsyncError; h != nil {
		h(err)
		return
	}
	c.opts.logger.Warn("felix publish refused (no one waits for it)", "broker", c.brokerID, "err", err)
}

// onAnswer completes the call a control answer (OK, PONG, STREAM_INFO, ...)
// belongs to with a copy of its body.
func (c *conn) onAnswer(f wire.Frame) error {
	cl := c.take(f.RequestID)
	if cl == nil {
		return nil // a pong to a keepalive ping, an answer nobody awaits
	}
	cl.ftype = f.Type
	cl.body = append(cl.body[:0], f.Body...)
	c.finish(cl, nil)
	return nil
}

func (c *conn) onPing(f wire.Frame) error {
	var p wire.Ping
	if err := p.Decode(f, c.readLimits); err != nil {
		return fmt.Errorf("%w: PING: %w", ErrProtocol, err)
	}
	id := f.RequestID
	c.notify(func(dst []byte, _ uint64) []byte { return wire.AppendPong(dst, id, p.Payload) })
	return nil
}

// waitForReader holds the reader goroutine until room is closed (the
// subscriber took an event) or the connection dies, and reports which.
// Meanwhile the pinger does not take the silence for the broker's.
func (c *conn) waitForReader(room chan struct{}) bool {
	c.readerWaits.Store(true)
	defer func() {
		c.lastRead.Store(time.Now().UnixNano())
		c.readerWaits.Store(false)
	}()
	select {
	case <-room:
		return true
	case <-c.dead:
		return false
	}
}

// pingLoop keeps an idle connection open and notices a broker that went
// silent: no bytes for two intervals end the connection.
func (c *conn) pingLoop(interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-c.dead:
			return
		case now := <-t.C:
			silent := now.Sub(time.Unix(0, c.lastRead.Load()))
			if silent > 2*interval && !c.readerWaits.Load() {
				c.die(fmt.Errorf("%w: the broker was silent for %v", ErrConnectionLost, silent.Round(time.Millisecond)))
				return
			}
			c.notify(func(dst []byte, id uint64) []byte { return wire.AppendPing(dst, id, uint64(now.UnixNano())) })
		}
	}
}
