package peer

import "github.com/felixbroker/felix/netio/wire"

// Read buffer bounds of a dialled connection: it starts at readBufBytes,
// grows to hold a larger frame whole (Config.FrameBytesMax at most, the
// frame's declared length checked first), and goes back to readBufBytes
// once such a frame is handled and less than that is left.
const (
	readBufBytes     = 64 << 10
	readBufKeepBytes = 1 << 20
)

// reader is the connection's only reader: it matches every answer to its
// request and completes it, until the connection fails.
func (l *link) reader(dc *dialConn) {
	defer l.t.wg.Done()
	l.fail(dc, l.readAnswers(dc))
}

func (l *link) readAnswers(dc *dialConn) error {
	r := wire.Reader{Limits: l.t.lim}
	buf := make([]byte, max(readBufBytes, len(dc.rest)))
	n := copy(buf, dc.rest)
	dc.rest = nil
	for {
		off, need, err := l.answerAll(&r, buf[:n])
		if err != nil {
			return err
		}
		n = copy(buf, buf[off:n])
		buf = fitReadBuf(buf, n, need)
		m, err := dc.s.Read(buf[n:])
		if err != nil {
			return err
		}
		n += m
	}
}

// answerAll completes the request of every whole answer in b; off is
// where the unfinished rest starts, need what it still lacks.
func (l *link) answerAll(r *wire.Reader, b []byte) (off, need int, err error) {
	for {
		f, need, err := r.Next(b[off:])
		if err != nil || need > 0 {
			return off, need, err
		}
		if f.RequestID == 0 {
			return off, 0, errAnswerWithoutRequest
		}
		if c := l.core.take(f.RequestID); c != nil {
			c.Done(c, f, nil)
		} // else its caller gave up, or it timed out: dropped
		off += f.Size()
	}
}

// fitReadBuf is buf, or a buffer that holds its first n bytes and need
// more (a large frame), or, once a large frame is done, a small one again.
func fitReadBuf(buf []byte, n, need int) []byte {
	switch {
	case n+need > len(buf):
		bigger := make([]byte, n+need)
		copy(bigger, buf[:n])
		return bigger
	case len(buf) > readBufKeepBytes && n+need <= readBufBytes:
		smaller := make([]byte, readBufBytes)
		copy(smaller, buf[:n])
		return smaller
	}
	return buf
}
