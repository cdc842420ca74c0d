package workload

import (
	"context"

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
// each request whole and writes answerBytes back (an ack's size for a
// publish; the request itself, an echo, for a delivery). Paced and bounded
// as the workload is (rate, duration capped at s.BaselineDuration), and
// counted in the workload's records and bytes, so every figure compares.
// A RoleBaseline named "tcp/loopback".
func TCPRequestAnswer(ctx context.Context, s Spec, requestBytes, answerBytes int) (bench.Result, error) {
	srv, err := startAnswerServer(requestBytes, answerBytes)
	if err != nil {
		return bench.Result{}, err
	}
	defer srv.close()
	p := &tcpPipe{req: make([]byte, requestBytes), records: int64(s.Batch), bytes: int64(s.Batch * s.RecordBytes)}
	for range s.Publishers {
		c, err := net.Dial("tcp", srv.ln.Addr().String())
		if err != nil {
			p.close()
			return bench.Result{}, fmt.Errorf("felix/bench/workload: tcp baseline: %w", err)
		}
		p.conns = append(p.conns, c)
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

// answerServer reads fixed-size requests and answers each with a fixed
// number of bytes: the least any broker could do.
type answerServer struct {
	ln    net.Listener
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns []net.Conn
}

func startAnswerServer(requestBytes, answerBytes int) (*answerServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("felix/bench/workload: tcp baseline: %w", err)
	}
	s := &answerServer{ln: ln}
	s.wg.Add(1)
	go s.accept(requestBytes, answerBytes)
	return s, nil
}

func (s *answerServer) accept(requestBytes, answerBytes int) {
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
			serveAnswers(c, requestBytes, answerBytes)
		}()
	}
}

func serveAnswers(c net.Conn, requestBytes, answerBytes int) {
	req, ans := make([]byte, requestBytes), make([]byte, answerBytes)
	for {
		if _, err := io.ReadFull(c, req); err != nil {
			return
		}
		if _, err := c.Write(ans); err != nil {
			return
		}
	}
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
