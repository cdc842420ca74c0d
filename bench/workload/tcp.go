package workload

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/felixbroker/felix/bench"
)

// Frame sizes the TCP baseline moves, near enough to the protocol's: a
// publish request carries a header, the stream's names and each record's
// framing; its acknowledgement is a header and one run.
const (
	publishOverheadBytes = 64
	recordOverheadBytes  = 16
	ackBytes             = 40
)

// publishFrameBytes is about what one publish request of s puts on the wire.
func publishFrameBytes(s Spec) int {
	return publishOverheadBytes + s.Batch*(s.RecordBytes+recordOverheadBytes)
}

// TCPRequestAnswer measures the raw limit of the network path for s's
// shape: s.Publishers loopback connections to a bare Go server, each
// keeping s.Inflight requests of requestBytes in flight; the server reads
// each request whole (its first 8 bytes say its length, as a frame's
// header does) and writes answerBytes back (an ack's size for a publish;
// the request itself, an echo, for a delivery). Paced and bounded
// as the workload is (rate, duration capped at s.BaselineDuration), and
// counted in the workload's records and bytes, so every figure compares.
// A RoleBaseline named "tcp/loopback".
func TCPRequestAnswer(ctx context.Context, s Spec, requestBytes, answerBytes int) (bench.Result, error) {
	srv, err := startAnswerServer()
	if err != nil {
		return bench.Result{}, err
	}
	defer srv.close()
	conns, err := srv.dial(s.Publishers)
	if err != nil {
		return bench.Result{}, err
	}
	p := &tcpPipe{conns: conns, req: answerRequest(requestBytes, answerBytes), records: int64(s.Batch),
		bytes: int64(s.Batch * s.RecordBytes)}
	for range s.Publishers {
		p.answers = append(p.answers, make([]byte, answerBytes))
	}
	defer p.close()
	stop := context.AfterFunc(ctx, p.close)
	defer stop()
	load := s.load(s.Publishers)
	load.Duration = baselineDuration(s)
	rec := bench.NewRecorder(s.Publishers)
	if s.Progress != nil {
		defer s.Progress("tcp/loopback", rec)()
	}
	m, err := bench.RunPipeline(ctx, load, s.Inflight, rec, p)
	if err != nil {
		return bench.Result{}, err
	}
	params := s.params()
	params.Extra = map[string]string{"request_bytes": strconv.Itoa(requestBytes), "answer_bytes": strconv.Itoa(answerBytes),
		"inflight": strconv.Itoa(s.Inflight)}
	return bench.NewResult("tcp/loopback", bench.RoleBaseline, params, m), nil
}

// baselineDuration is how long a raw limit is measured: as long as the
// workload, at most s.BaselineDuration.
func baselineDuration(s Spec) time.Duration {
	if s.Duration > 0 && s.Duration < s.BaselineDuration {
		return s.Duration
	}
	return s.BaselineDuration
}

// tcpPipe is one connection per worker: Send writes a request, Await reads
// the next answer (answers come back in order on a connection).
type tcpPipe struct {
	req            []byte
	conns          []net.Conn
	answers        [][]byte
	records, bytes int64
	closeOnce      sync.Once
}

func (p *tcpPipe) Send(w int, _ time.Time) (any, error) {
	_, err := p.conns[w].Write(p.req)
	return nil, err
}

func (p *tcpPipe) Await(w int, _ any) (int64, int64, error) {
	if _, err := io.ReadFull(p.conns[w], p.answers[w]); err != nil {
		return 0, 0, err
	}
	return p.records, p.bytes, nil
}

func (p *tcpPipe) close() {
	p.closeOnce.Do(func() {
		for _, c := range p.conns {
			c.Close()
		}
	})
}

// answerServer reads requests and answers each with as many bytes as it
// asks for: the least any broker could do. A request starts with a
// header, as a frame does: its own length and its answer's, little-endian
// u32 each.
//
//	+----------------------+---------------------+------------------+
//	| request bytes (u32)  | answer bytes (u32)  | the rest         |
//	+----------------------+---------------------+------------------+
type answerServer struct {
	ln    net.Listener
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns []net.Conn
}

// Limits of the answer server: a request header, and what one request
// or answer may ask for (a frame's bound, with room for headers).
const (
	answerHeaderBytes = 8
	answerBytesMax    = 8 << 20
)

// answerRequest is a request of requestBytes (at least its header)
// asking for answerBytes.
func answerRequest(requestBytes, answerBytes int) []byte {
	req := make([]byte, max(requestBytes, answerHeaderBytes))
	binary.LittleEndian.PutUint32(req[0:4], uint32(len(req)))
	binary.LittleEndian.PutUint32(req[4:8], uint32(answerBytes))
	return req
}

func startAnswerServer() (*answerServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("felix/bench/workload: tcp baseline: %w", err)
	}
	s := &answerServer{ln: ln}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// dial opens n connections to the server; the caller closes them.
func (s *answerServer) dial(n int) ([]net.Conn, error) {
	var conns []net.Conn
	for range n {
		c, err := net.Dial("tcp", s.ln.Addr().String())
		if err != nil {
			for _, c := range conns {
				c.Close()
			}
			return nil, fmt.Errorf("felix/bench/workload: tcp baseline: %w", err)
		}
		conns = append(conns, c)
	}
	return conns, nil
}

func (s *answerServer) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns = append(s.conns, c)
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			serveAnswers(c)
		}()
	}
}

// serveAnswers answers c's requests until it closes or asks for more
// than answerBytesMax.
func serveAnswers(c net.Conn) {
	var head [answerHeaderBytes]byte
	var req, ans []byte
	for {
		if _, err := io.ReadFull(c, head[:]); err != nil {
			return
		}
		reqBytes := int(binary.LittleEndian.Uint32(head[0:4])) - answerHeaderBytes
		ansBytes := int(binary.LittleEndian.Uint32(head[4:8]))
		if reqBytes < 0 || reqBytes > answerBytesMax || ansBytes > answerBytesMax {
			return
		}
		req, ans = grow(req, reqBytes), grow(ans, ansBytes)
		if _, err := io.ReadFull(c, req); err != nil {
			return
		}
		if _, err := c.Write(ans); err != nil {
			return
		}
	}
}

// grow returns b resliced to n bytes, reallocated only when too small.
func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}

func (s *answerServer) close() {
	s.ln.Close()
	s.mu.Lock()
	for _, c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}
