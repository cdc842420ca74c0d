package peer

import (
	"io"
	"net"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// harness is one implementation under the contract suite: brokers that
// reach each other, and the links between them, which can be cut.
type harness interface {
	// join starts broker id; hook, when set, changes what it speaks.
	join(t *testing.T, id string, hook func(*speaks)) Transport
	cut(a, b string)
	heal(a, b string)
}

// impl runs a contract test on one implementation.
type impl struct {
	name string
	run  func(t *testing.T, test func(t *testing.T, h harness))
}

var impls = []impl{
	{"tcp", func(t *testing.T, test func(*testing.T, harness)) { test(t, newTCPHarness(t)) }},
	{"mem", func(t *testing.T, test func(*testing.T, harness)) {
		synctest.Test(t, func(t *testing.T) { test(t, newMemHarness(t)) })
	}},
}

// memHarness: brokers of one Network delivering as messages come.
type memHarness struct{ n *Network }

func newMemHarness(t *testing.T) *memHarness {
	n := NewNetwork(NetworkOptions{Seed: 1})
	t.Cleanup(n.Close)
	return &memHarness{n: n}
}

func (h *memHarness) join(t *testing.T, id string, hook func(*speaks)) Transport {
	m, err := h.n.join(id, hook)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func (h *memHarness) cut(a, b string)  { h.n.Cut(a, b) }
func (h *memHarness) heal(a, b string) { h.n.Heal(a, b) }

// tcpHarness: brokers on loopback whose every directed link goes through a
// proxy that can cut it (close its connections, refuse new ones). No
// backoff jitter, so a healed link's first request redials.
type tcpHarness struct {
	t       *testing.T
	mu      sync.Mutex
	addrs   map[string]string
	proxies map[route]*proxy
}

func newTCPHarness(t *testing.T) *tcpHarness {
	h := &tcpHarness{t: t, addrs: map[string]string{}, proxies: map[route]*proxy{}}
	t.Cleanup(h.close)
	return h
}

func (h *tcpHarness) join(t *testing.T, id string, hook func(*speaks)) Transport {
	tr := listenTest(t, Config{ID: id, Resolve: h.resolver(id), hook: hook})
	h.mu.Lock()
	h.addrs[id] = tr.Addr().String()
	h.mu.Unlock()
	return tr
}

// listenTest starts a TCP transport on loopback with test timings, closed
// at the test's end.
func listenTest(t testing.TB, cfg Config) *TCP {
	t.Helper()
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.jitter == nil {
		cfg.jitter = func() float64 { return 0 }
	}
	tr, err := Listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	return tr
}

func (h *tcpHarness) resolver(from string) func(string) (string, error) {
	return func(to string) (string, error) { return h.proxy(from, to).addr(), nil }
}

func (h *tcpHarness) proxy(from, to string) *proxy {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := h.proxies[route{from, to}]
	if p == nil {
		p = newProxy(h.t, func() string {
			h.mu.Lock()
			defer h.mu.Unlock()
			return h.addrs[to]
		})
		h.proxies[route{from, to}] = p
	}
	return p
}

func (h *tcpHarness) cut(a, b string) {
	h.proxy(a, b).setCut(true)
	h.proxy(b, a).setCut(true)
}

func (h *tcpHarness) heal(a, b string) {
	h.proxy(a, b).setCut(false)
	h.proxy(b, a).setCut(false)
}

func (h *tcpHarness) close() {
	h.mu.Lock()
	ps := h.proxies
	h.proxies = map[route]*proxy{}
	h.mu.Unlock()
	for _, p := range ps {
		p.close()
	}
}

// proxy forwards loopback connections to a target; cut, it closes them
// and those that come.
type proxy struct {
	ln     net.Listener
	target func() string
	mu     sync.Mutex
	isCut  bool
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
}

func newProxy(t *testing.T, target func() string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.serve()
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(c) {
			continue
		}
		p.wg.Add(1)
		go p.pipe(c)
	}
}

// track keeps c to be closed by a cut; a cut proxy closes it at once.
func (p *proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.isCut {
		_ = c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *proxy) pipe(c net.Conn) {
	defer p.wg.Done()
	d, err := net.DialTimeout("tcp", p.target(), 2*time.Second)
	if err != nil || !p.track(d) {
		_ = c.Close()
		if d != nil {
			_ = d.Close()
		}
		return
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		_, _ = io.Copy(d, c)
		_ = d.Close()
		_ = c.Close()
	}()
	_, _ = io.Copy(c, d)
	_ = c.Close()
	_ = d.Close()
}

func (p *proxy) setCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.isCut = cut
	if cut {
		for c := range p.conns {
			_ = c.Close()
		}
		clear(p.conns)
	}
}

func (p *proxy) close() {
	_ = p.ln.Close()
	p.setCut(true)
	p.wg.Wait()
}
