package peer

import (
	"bytes"
	"net"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// The writes that never wait: a Send's on its caller's goroutine, a
// served connection's answers given off its reader, and what each leaves
// to the goroutine that waits (the link's flusher, the connection's
// writer) when the socket is full.

// fakeListener is broker "b" by hand: it accepts one connection, answers
// its PEER_HELLO, and then reads nothing until the test says (read), so
// the sender's socket fills.
type fakeListener struct {
	ln    net.Listener
	conns chan net.Conn
}

func newFakeListener(t *testing.T) *fakeListener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	fl := &fakeListener{ln: ln, conns: make(chan net.Conn, 1)}
	go fl.accept(t)
	return fl
}

func (fl *fakeListener) accept(t *testing.T) {
	nc, err := fl.ln.Accept()
	if err != nil {
		return
	}
	t.Cleanup(func() { _ = nc.Close() })
	if _, _, err := readFrame(nc, wire.Limits{FrameBytesMax: handshakeBytesMax}); err != nil {
		return
	}
	ok := wire.PeerHelloOK{Version: wire.PeerProtocolVersion, Features: wire.PeerFeaturesRequired,
		FrameBytesMax: DefaultFrameBytesMax, InflightRequestsMax: DefaultInflightMax, BrokerID: []byte("b")}
	if _, err := nc.Write(wire.AppendPeerHelloOK(nil, 1, ok)); err != nil {
		return
	}
	fl.conns <- nc
}

// echoAll reads n frames from nc and writes each back as its answer.
func echoAll(t *testing.T, nc net.Conn, n int) {
	t.Helper()
	_ = nc.SetDeadline(time.Now().Add(eventWait))
	r := wire.Reader{Limits: wire.Limits{FrameBytesMax: DefaultFrameBytesMax}}
	var buf []byte
	for n > 0 {
		f, need, err := r.Next(buf)
		if err != nil {
			t.Errorf("the sender's stream: %v", err)
			return
		}
		if need == 0 {
			if _, err := nc.Write(buf[:f.Size()]); err != nil {
				t.Errorf("answering: %v", err)
				return
			}
			buf = buf[:copy(buf, buf[f.Size():])]
			n--
			continue
		}
		more := make([]byte, need)
		m, err := nc.Read(more)
		if err != nil {
			t.Errorf("reading: %v", err)
			return
		}
		buf = append(buf, more[:m]...)
	}
}

// valued is a PUBLISH of size bytes whose value starts with i.
func valued(i, size int) []byte {
	v := bytes.Repeat([]byte{byte(i)}, size)
	copy(v, strconv.Itoa(i)+":")
	return pub(v)
}

func TestTCPSendWritesOnItsCallersGoroutineOnAnIdleLink(t *testing.T) {
	a, b := pair(t, nil)
	b.Handle(echo)
	out := make(chan outcome, 1)
	for i := range 3 {
		if i > 0 {
			waitWritten(t, a.linkTo("b")) // the answer can come before the write's end is seen
		}
		if err := a.Send(asyncCall("b", valued(i, 100), 0, out)); err != nil {
			t.Fatal(err)
		}
		if o := receive(t, out, eventWait); o.err != nil || !bytes.HasPrefix(o.value, []byte(strconv.Itoa(i)+":")) {
			t.Fatalf("answer %q, %v", o.value[:min(len(o.value), 8)], o.err)
		}
	}
	l := a.linkTo("b")
	l.core.mu.Lock()
	writes, directs := l.writes, l.directs
	l.core.mu.Unlock()
	// The first waited for the dial and went with the flusher; the others
	// found the link idle.
	if writes != 3 || directs != 2 {
		t.Fatalf("%d writes, %d of them Sends' own; want 3 and 2", writes, directs)
	}
}

// Small Sends made while others await their answers leave their frames to
// the flusher, whose writes gather them: a pipelining caller makes few
// writes, not one per request.
func TestTCPSendsAmongOthersInFlightGatherForTheFlusher(t *testing.T) {
	a, b := pair(t, nil)
	hd := newHeld()
	b.Handle(hd)
	out := make(chan outcome, 256)
	const n = 200
	for i := range n {
		if err := a.Send(asyncCall("b", valued(i, 100), 0, out)); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			hd.await(t, 1, eventWait) // the link is up, and the first stays in flight
		}
	}
	hd.await(t, n-1, eventWait)
	l := a.linkTo("b")
	l.core.mu.Lock()
	writes, directs := l.writes, l.directs
	l.core.mu.Unlock()
	if directs != 0 {
		t.Fatalf("%d of %d Sends with others in flight wrote themselves", directs, n)
	}
	t.Logf("%d requests in %d writes", n, writes)
	// A large one writes itself all the same: gathering saves little.
	waitWritten(t, l)
	if err := a.Send(asyncCall("b", valued(n, directFrameBytesMin), 0, out)); err != nil {
		t.Fatal(err)
	}
	hd.await(t, 1, eventWait)
	l.core.mu.Lock()
	directs = l.directs
	l.core.mu.Unlock()
	if directs != 1 {
		t.Fatalf("a Send of %d bytes among others in flight left its frame to the flusher", directFrameBytesMin)
	}
	hd.answerAll()
	for range n + 1 {
		if o := receive(t, out, eventWait); o.err != nil {
			t.Fatal(o.err)
		}
	}
}

// A Send that finds the socket full writes what it takes and leaves the
// rest to the flusher: the request reaches the peer whole once the peer
// reads, and is answered once.
func TestTCPSendLeavesWhatAFullSocketDoesNotTakeToTheFlusher(t *testing.T) {
	fl := newFakeListener(t)
	a := listenTest(t, Config{ID: "a", Resolve: func(string) (string, error) { return fl.ln.Addr().String(), nil }})
	out := make(chan outcome, 1)
	if err := a.Send(asyncCall("b", valued(0, 100), 0, out)); err != nil { // dials
		t.Fatal(err)
	}
	nc := <-fl.conns
	echoAll(t, nc, 1)
	if o := receive(t, out, eventWait); o.err != nil {
		t.Fatal(o.err)
	}
	const size = 12 << 20 // more than loopback's socket buffers hold
	waitWritten(t, a.linkTo("b"))
	if err := a.Send(asyncCall("b", valued(1, size), 0, out)); err != nil {
		t.Fatal(err)
	}
	if partialWrites(a) != 1 {
		t.Fatalf("the socket took %d MiB in one write", size>>20)
	}
	echoAll(t, nc, 1)
	if o := receive(t, out, eventWait); o.err != nil || len(o.value) != size || !bytes.HasPrefix(o.value, []byte("1:")) {
		t.Fatalf("answer %q (%d bytes), %v", o.value[:min(len(o.value), 8)], len(o.value), o.err)
	}
}

// waitWritten waits until no write is under way on l (the flusher has
// seen its buffer empty).
func waitWritten(t *testing.T, l *link) {
	t.Helper()
	deadline := time.Now().Add(eventWait)
	for {
		l.core.mu.Lock()
		busy := l.flushing
		l.core.mu.Unlock()
		if !busy {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the link's write never ended")
		}
		runtime.Gosched()
	}
}

func partialWrites(a *TCP) uint64 {
	l := a.linkTo("b")
	l.core.mu.Lock()
	defer l.core.mu.Unlock()
	return l.partial
}

// Many goroutines sending at once, some writing themselves and some
// leaving their frames to the write under way: each request gets its own
// answer, exactly once.
func TestTCPConcurrentSendsAreEachAnsweredOnceWithTheirOwnAnswer(t *testing.T) {
	a, b := pair(t, nil)
	b.Handle(echo)
	const senders, each = 16, 200
	var wg sync.WaitGroup
	for s := range senders {
		wg.Go(func() {
			out := make(chan outcome, 1)
			for i := range each {
				id := s*each + i
				if err := a.Send(asyncCall("b", valued(id, 64+id%2048), 0, out)); err != nil {
					t.Error(err)
					return
				}
				o := receive(t, out, eventWait)
				if o.err != nil || !bytes.HasPrefix(o.value, []byte(strconv.Itoa(id)+":")) {
					t.Errorf("request %d answered %q, %v", id, o.value[:min(len(o.value), 8)], o.err)
					return
				}
				select {
				case o := <-out:
					t.Errorf("request %d answered twice: %q, %v", id, o.value, o.err)
					return
				default:
				}
			}
		})
	}
	wg.Wait()
	writes, frames := a.linkTo("b").stats()
	t.Logf("%d requests in %d writes", frames, writes)
}

// A write cut short counts as sent up to its last whole frame: a frame
// cut anywhere, its header included, does not count, and the next write,
// which starts by finishing it, counts it once it is whole.
func TestAWriteCountsOnlyTheFramesItHandedOverWhole(t *testing.T) {
	var out []byte
	var ends []int
	for seq := uint64(7); seq <= 9; seq++ {
		out = appendWithID(out, pub(make([]byte, 10*int(seq))), seq<<idSlotBits|3)
		ends = append(ends, len(out))
	}
	w := writeStart{sent: 6}
	cases := []struct {
		n          int
		sent       uint64
		rest       int
		restOfSeq  uint64
		describing string
	}{
		{0, 6, 0, 0, "nothing"},
		{1, 6, ends[0] - 1, 7, "a byte of the first"},
		{ends[0] - 1, 6, 1, 7, "all but a byte of the first"},
		{ends[0], 7, 0, 0, "the first"},
		{ends[0] + wire.HeaderSize, 7, ends[1] - ends[0] - wire.HeaderSize, 8, "the first and a header"},
		{ends[1], 8, 0, 0, "two"},
		{ends[2] - 1, 8, 1, 9, "all but a byte"},
		{ends[2], 9, 0, 0, "all"},
	}
	for _, c := range cases {
		sent, rest, seq := w.upTo(out, c.n)
		if sent != c.sent || rest != c.rest || seq != c.restOfSeq {
			t.Errorf("%s (%d of %v): sent %d, %d bytes of %d left; want %d, %d of %d",
				c.describing, c.n, ends, sent, rest, seq, c.sent, c.rest, c.restOfSeq)
		}
	}
	// The next write starts with the 5 bytes frame 8 still lacks.
	next := writeStart{sent: 7, cut: 5, cutSeq: 8}
	tail := out[ends[1]-5:]
	for _, c := range []struct {
		n          int
		sent       uint64
		rest       int
		restOfSeq  uint64
		describing string
	}{
		{0, 7, 5, 8, "nothing"},
		{4, 7, 1, 8, "all but a byte of the cut frame"},
		{5, 8, 0, 0, "the cut frame's rest"},
		{5 + 1, 8, ends[2] - ends[1] - 1, 9, "and a byte of the next"},
		{len(tail), 9, 0, 0, "all"},
	} {
		sent, rest, seq := next.upTo(tail, c.n)
		if sent != c.sent || rest != c.rest || seq != c.restOfSeq {
			t.Errorf("after a cut, %s (%d): sent %d, %d bytes of %d left; want %d, %d of %d",
				c.describing, c.n, sent, rest, seq, c.sent, c.rest, c.restOfSeq)
		}
	}
}

// A served connection whose peer reads its answers late: the answers the
// socket cannot take wait for the connection's writer, and the peer gets
// every one, whole and in order, once it reads.
func TestTCPListenerAnswersAPeerThatReadsLateInOrder(t *testing.T) {
	_, b := pair(t, nil)
	b.Handle(echo)
	nc := rawPeer(t, b.Addr().String())
	const n, size = 48, 256 << 10
	for i := range n {
		req := valued(i, size)
		req[8] = byte(i + 1) // request id i+1
		if _, err := nc.Write(req); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		f := readRaw(t, nc)
		if f.RequestID != uint64(i+1) || !bytes.HasPrefix(valueOf(t, f), []byte(strconv.Itoa(i)+":")) {
			t.Fatalf("answer %d: request %d, %q", i, f.RequestID, valueOf(t, f)[:8])
		}
	}
	if w := writerWrites(b); w == 0 {
		t.Fatalf("%d MiB of answers, and the socket took every write whole", n*size>>20)
	}
}

// writerWrites is how many writes the writers of b's served connections
// made.
func writerWrites(b *TCP) (n uint64) {
	b.srv.mu.Lock()
	defer b.srv.mu.Unlock()
	for sc := range b.srv.conns {
		sc.out.mu.Lock()
		n += sc.out.waited
		sc.out.mu.Unlock()
	}
	return n
}

// A peer that never reads its answers is closed once they pass the
// backlog bound, instead of holding the listener's memory for ever.
func TestTCPListenerClosesAPeerThatNeverReadsItsAnswers(t *testing.T) {
	var book sync.Map
	b := listenTest(t, Config{ID: "b", FrameBytesMax: 64 << 10, Resolve: func(id string) (string, error) {
		v, _ := book.Load(id)
		s, _ := v.(string)
		return s, nil
	}})
	b.Handle(echo)
	nc := rawPeer(t, b.Addr().String())
	req := valued(1, 32<<10)
	req[8] = 1
	limit := answerBacklogBytesMax(64<<10) + 64<<20 // the bound and far more than the sockets hold
	for sent := 0; sent < limit; sent += len(req) {
		if _, err := nc.Write(req); err != nil {
			return // closed
		}
	}
	t.Fatalf("%d bytes of requests whose answers were never read, and the connection is open", limit)
}
