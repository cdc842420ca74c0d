//go:build unix

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/felixbroker/felix/broker"
	"github.com/felixbroker/felix/check"
	"github.com/felixbroker/felix/client"
)

// nemesisRoundsEnv sets how many rounds each nemesis test runs (a kill or
// a freeze of the shard's leader each); unset, nemesisRoundsDefault.
const nemesisRoundsEnv = "FELIX_NEMESIS_ROUNDS"

// nemesisRoundsDefault keeps `make test` within about a minute for the
// file on a two-core machine.
const nemesisRoundsDefault = 2

func nemesisRounds(t *testing.T) int {
	t.Helper()
	v := os.Getenv(nemesisRoundsEnv)
	if v == "" {
		return nemesisRoundsDefault
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 50 {
		t.Fatalf("%s=%q: want a number of rounds from 1 to 50", nemesisRoundsEnv, v)
	}
	return n
}

// nemesisSegmentBytes is the brokers' --segment-bytes: every log of the
// run (the stream's shard, each cache shard's values and counters) keeps
// a prepared spare segment zero-filled and synced, and at the default 64
// MiB that is about half a gigabyte a broker to write before the first
// round, and 64 MiB more for every log at every restart; 1 MiB also has
// the longer runs roll their stream's segments over while the faults run.
const nemesisSegmentBytes = "1MiB"

// nemesisCluster is three `felix serve` processes on --cluster (an
// embedded etcd member each, on loopback) with a short shard lease, which
// a test kills (SIGKILL), freezes (SIGSTOP), resumes (SIGCONT) and
// restarts, each by its pid. A broker killed is started again on its data
// directory and addresses as a new serveProcess; at the end every process
// running is stopped as startServeProcesses stops them (SIGTERM, then
// exit 0 is required), a frozen one resumed first.
type nemesisCluster struct {
	t       *testing.T
	hosts   nemesisHosts
	members string   // --cluster
	extra   []string // the serve flags beyond startServeProcesses's
	env     []string
	stdinR  *os.File // the children's standard input (exitWithStdin)

	mu         sync.Mutex
	procs      map[string]*serveProcess // the incarnation of each broker now
	etcdClient map[string]string        // each broker's --etcd-client-addr
	state      map[string]procState
	all        []*serveProcess // every incarnation, for the logs of a failed test
	clients    map[*serveProcess]*client.Client

	logs     *nemesisLogs // kept under FELIX_NEMESIS_LOGS, or nil
	journals *ackJournals // the brokers' ack journals (serve_nemesis_journal_test.go)
	load     *cacheLoad   // the run's cache load (serve_nemesis_cache_test.go), once started
}

type procState int

const (
	procRunning procState = iota
	procFrozen
	procKilled
	procStopped // by SIGTERM, and exited 0
)

func (s procState) String() string {
	return [...]string{"running", "frozen", "killed", "stopped"}[s]
}

// nemesisHosts is where a nemesis cluster's brokers run: the addresses
// each listens on, and the command that starts its process.
type nemesisHosts interface {
	// addrs are the addresses of the brokers named, in their order.
	addrs(t *testing.T, names []string) []brokerAddrs
	// command is the process that runs this test binary as felix with
	// the arguments given, as broker name.
	command(name string, args []string) *exec.Cmd
}

// brokerAddrs are one broker's listeners: --addr, --admin-addr,
// --peer-addr, its etcd member's peer address (in --cluster) and
// --etcd-client-addr.
type brokerAddrs struct{ client, admin, peer, etcdPeer, etcdClient string }

// loopbackHosts runs every broker in this process's network namespace,
// on loopback ports free a moment before.
type loopbackHosts struct{}

func (loopbackHosts) addrs(t *testing.T, names []string) []brokerAddrs {
	// Five addresses a broker, its etcd member's client address among
	// them: left to etcd (127.0.0.1:0), that listener could take a port
	// chosen here for another broker before that one binds it.
	const each = 5
	a := freeAddrs(t, each*len(names))
	var out []brokerAddrs
	for i := range names {
		out = append(out, brokerAddrs{client: a[each*i], admin: a[each*i+1], peer: a[each*i+2], etcdPeer: a[each*i+3], etcdClient: a[each*i+4]})
	}
	return out
}

func (loopbackHosts) command(_ string, args []string) *exec.Cmd {
	return exec.Command(os.Args[0], args...)
}

// startNemesisClusterOn starts brokers a, b and c where hosts says with
// the shard lease and publish timeout given, and waits until each is
// ready.
func startNemesisClusterOn(t *testing.T, hosts nemesisHosts, lease, publishTimeout time.Duration) *nemesisCluster {
	t.Helper()
	names := []string{"a", "b", "c"}
	addrs := hosts.addrs(t, names)
	var members []string
	for i, n := range names {
		members = append(members, n+"="+addrs[i].etcdPeer)
	}
	// The data directories first: their cleanups then run after the
	// processes' stop below (cleanups run last registered first).
	var dirs []string
	for range names {
		dirs = append(dirs, t.TempDir())
	}
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	logs := newNemesisLogs(t) // before the processes' cleanup: closed after they stop
	journals := newAckJournals(t)
	c := &nemesisCluster{
		t: t, hosts: hosts, logs: logs, journals: journals, members: strings.Join(members, ","), stdinR: stdinR,
		extra: []string{"--shard-lease", lease.String(), "--publish-timeout", publishTimeout.String(), "--segment-bytes", nemesisSegmentBytes},
		env:   []string{runMainEnv + "=1", exitWithStdinEnv + "=1"},
		procs: map[string]*serveProcess{}, etcdClient: map[string]string{}, state: map[string]procState{}, clients: map[*serveProcess]*client.Client{},
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FELIX_") {
			c.env = append(c.env, kv)
		}
	}
	c.env = append(c.env, journals.env())
	t.Cleanup(func() {
		c.mu.Lock()
		for _, cl := range c.clients {
			cl.Close()
		}
		var running []*serveProcess
		for _, n := range names {
			p := c.procs[n]
			switch c.state[n] {
			case procFrozen:
				if err := p.cmd.Process.Signal(syscall.SIGCONT); err != nil {
					t.Errorf("SIGCONT to broker %s (pid %d): %v", n, p.cmd.Process.Pid, err)
				}
				fallthrough
			case procRunning:
				running = append(running, p)
			}
		}
		all := c.all
		c.mu.Unlock()
		stopServeProcesses(t, running)
		stdinW.Close()
		stdinR.Close()
		if t.Failed() {
			for _, p := range all {
				t.Logf("broker %s (pid %d) printed:\n%s", p.name, p.cmd.Process.Pid, tail(p.out.String(), 16<<10))
			}
		}
	})
	for i, n := range names {
		a := addrs[i]
		c.start(&serveProcess{name: n, addr: a.client, adminAddr: a.admin, peerAddr: a.peer,
			etcdPeerAddr: a.etcdPeer, dataDir: dirs[i]}, a.etcdClient)
	}
	for _, n := range names {
		c.proc(n).awaitReady(t, 60*time.Second)
	}
	return c
}

// start runs p (a new incarnation of its broker) as `felix serve`, its
// etcd member serving clients on etcdClientAddr.
func (c *nemesisCluster) start(p *serveProcess, etcdClientAddr string) {
	c.t.Helper()
	args := append([]string{"serve", "--data", p.dataDir, "--addr", p.addr, "--admin-addr", p.adminAddr,
		"--peer-addr", p.peerAddr, "--broker-id", p.name, "--cluster", c.members, "--etcd-client-addr", etcdClientAddr,
		"--log-level", nemesisLogLevel()}, c.extra...)
	p.cmd = c.hosts.command(p.name, args)
	p.cmd.Env = c.env
	p.out = &lockedBuffer{}
	out := io.MultiWriter(p.out, c.logs.writer(p.name))
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = c.stdinR, out, out
	if err := p.cmd.Start(); err != nil {
		c.t.Fatalf("start broker %s: %v", p.name, err)
	}
	p.done = make(chan struct{})
	go func() {
		p.waitErr = p.cmd.Wait()
		p.stopped = time.Now()
		close(p.done)
	}()
	c.mu.Lock()
	c.procs[p.name], c.state[p.name] = p, procRunning
	c.etcdClient[p.name] = etcdClientAddr
	c.all = append(c.all, p)
	c.mu.Unlock()
}

func (c *nemesisCluster) proc(name string) *serveProcess {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.procs[name]
}

// running are the names of the brokers neither killed nor frozen.
func (c *nemesisCluster) running() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for n, s := range c.state {
		if s == procRunning {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// client is a client of the broker's incarnation now, dialled once.
func (c *nemesisCluster) client(name string) *client.Client {
	c.t.Helper()
	p := c.proc(name)
	c.mu.Lock()
	cl := c.clients[p]
	c.mu.Unlock()
	if cl != nil {
		return cl
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl, err := client.Dial(ctx, p.addr)
	if err != nil {
		c.t.Fatalf("dial broker %s at %s: %v", name, p.addr, err)
	}
	c.mu.Lock()
	c.clients[p] = cl
	c.mu.Unlock()
	return cl
}

// signal sends sig to the broker's process, by its pid, and records
// what it did to it.
func (c *nemesisCluster) signal(name string, sig syscall.Signal) {
	c.t.Helper()
	p := c.proc(name)
	if err := p.cmd.Process.Signal(sig); err != nil {
		c.t.Fatalf("%v to broker %s (pid %d): %v", sig, name, p.cmd.Process.Pid, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch sig {
	case syscall.SIGKILL:
		c.state[name] = procKilled
	case syscall.SIGSTOP:
		c.state[name] = procFrozen
	case syscall.SIGCONT:
		c.state[name] = procRunning
	}
}

// kill ends the broker's process with SIGKILL and waits until it is gone.
func (c *nemesisCluster) kill(name string) {
	c.t.Helper()
	c.signal(name, syscall.SIGKILL)
	p := c.proc(name)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		c.t.Fatalf("broker %s (pid %d) still there 10s after SIGKILL", name, p.cmd.Process.Pid)
	}
}

// stop ends the broker's process as an operator does (SIGTERM), waits
// until it is gone, and fails the test unless it exited 0 within 20 s
// (it is killed then). It returns how long the exit took.
func (c *nemesisCluster) stop(name string) time.Duration {
	c.t.Helper()
	p := c.proc(name)
	began := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		c.t.Fatalf("SIGTERM to broker %s (pid %d): %v", name, p.cmd.Process.Pid, err)
	}
	deadline := time.NewTimer(20 * time.Second)
	defer deadline.Stop()
	select {
	case <-p.done:
	case <-deadline.C:
		c.kill(name)
		c.t.Fatalf("broker %s (pid %d) had not exited 20s after SIGTERM: killed; it printed:\n%s", name, p.cmd.Process.Pid, tail(p.out.String(), 8<<10))
	}
	c.mu.Lock()
	c.state[name] = procStopped
	c.mu.Unlock()
	if p.waitErr != nil {
		c.t.Fatalf("broker %s (pid %d) stopped by SIGTERM exited with %v; it printed:\n%s", name, p.cmd.Process.Pid, p.waitErr, tail(p.out.String(), 8<<10))
	}
	return p.stopped.Sub(began)
}

// restart starts a killed or stopped broker again on its data directory and
// addresses, and waits until it is ready.
func (c *nemesisCluster) restart(name string) {
	c.t.Helper()
	old := c.proc(name)
	p := &serveProcess{name: old.name, addr: old.addr, adminAddr: old.adminAddr, peerAddr: old.peerAddr,
		etcdPeerAddr: old.etcdPeerAddr, dataDir: old.dataDir}
	c.mu.Lock()
	etcdClientAddr := c.etcdClient[name]
	c.mu.Unlock()
	c.start(p, etcdClientAddr)
	p.awaitReady(c.t, 60*time.Second)
}

// awaitLeader polls /cluster at every running broker but not until one
// of them names a leader for s's shard 0 that is running and is not
// `not`, and returns it with its generation. (/cluster, not
// DescribeStream: DescribeStream's ShardInfo.Generation is the engine's
// stream generation, 1 for ever, not the shard's.)
func (c *nemesisCluster) awaitLeader(ctx context.Context, s client.Stream, not string) (string, uint64) {
	c.t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	last := "no answer yet"
	for {
		for _, n := range c.running() {
			if n == not {
				continue
			}
			sh, err := c.shard0(n, s)
			if err != nil {
				last = fmt.Sprintf("%s: %v", n, err)
				continue
			}
			j, _ := json.Marshal(sh)
			last = fmt.Sprintf("%s: %s", n, j)
			if sh.Leader == nil || sh.Leader.Broker == not || !slices.Contains(c.running(), sh.Leader.Broker) || !sh.LeaderLive {
				continue
			}
			if p := c.proc(sh.Leader.Broker); sh.Leader.ClientAddr != p.addr {
				c.t.Fatalf("%s names leader %s at %s; that broker serves at %s", n, sh.Leader.Broker, sh.Leader.ClientAddr, p.addr)
			}
			return sh.Leader.Broker, sh.Generation
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			c.t.Fatalf("no running broker but %q named a running leader of %v's shard 0 in time; last: %s", not, s, last)
		}
	}
}

// awaitSettledLeader polls /cluster at every running broker until all of
// them name one running, live leader of s's shard 0 at one generation,
// and every running broker's replica live (after a heal or a restart, a
// broker that was cut off or down may still name the one before, or not
// be registered yet), and returns the leader.
func (c *nemesisCluster) awaitSettledLeader(ctx context.Context, s client.Stream) (string, uint64) {
	c.t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		views, agreed := c.leaderViews(s)
		if agreed != nil {
			return agreed.Broker, agreed.Generation
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			c.t.Fatalf("the running brokers did not come to name one running leader of %v's shard 0 in time: %s", s, strings.Join(views, "; "))
		}
	}
}

// settled is a leader every running broker names, at a generation.
type settled struct {
	Broker     string
	Generation uint64
}

// leaderViews is what each running broker's /cluster says of s's shard
// 0's leader, and the leader they all name (live and running) if they
// agree.
func (c *nemesisCluster) leaderViews(s client.Stream) ([]string, *settled) {
	var views []string
	var agreed *settled
	same := true
	for _, n := range c.running() {
		sh, err := c.shard0(n, s)
		if err != nil {
			views, same = append(views, fmt.Sprintf("%s: %v", n, err)), false
			continue
		}
		j, _ := json.Marshal(sh)
		views = append(views, fmt.Sprintf("%s: %s", n, j))
		if sh.Leader == nil || !sh.LeaderLive || !slices.Contains(c.running(), sh.Leader.Broker) {
			same = false
			continue
		}
		for _, r := range sh.Replicas {
			// A running broker's replica not registered yet: a restarted
			// broker that has not come back to its shards.
			same = same && (r.Live || !slices.Contains(c.running(), r.Broker))
		}
		v := settled{sh.Leader.Broker, sh.Generation}
		if agreed == nil {
			agreed = &v
		}
		same = same && *agreed == v
	}
	if !same {
		return views, nil
	}
	return views, agreed
}

var adminClient = &http.Client{Timeout: 2 * time.Second}

// clusterStatus is the broker's /cluster.
func (c *nemesisCluster) clusterStatus(name string) (broker.ClusterStatusJSON, error) {
	var st broker.ClusterStatusJSON
	resp, err := adminClient.Get("http://" + c.proc(name).adminAddr + "/cluster")
	if err != nil {
		return st, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return st, err
	}
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("/cluster: %s: %.300s", resp.Status, body)
	}
	if err := json.Unmarshal(body, &st); err != nil {
		return st, fmt.Errorf("/cluster: %w", err)
	}
	return st, nil
}

// shard0 is s's shard 0 as the broker's /cluster describes it.
func (c *nemesisCluster) shard0(name string, s client.Stream) (broker.ClusterShardJSON, error) {
	st, err := c.clusterStatus(name)
	if err != nil {
		return broker.ClusterShardJSON{}, err
	}
	for _, o := range st.Objects {
		if o.Kind == "stream" && o.Tenant == s.Tenant && o.Namespace == s.Namespace && o.Name == s.Name {
			if len(o.Shards) == 0 {
				return broker.ClusterShardJSON{}, fmt.Errorf("/cluster: %v is %s, no shards", s, o.State)
			}
			return o.Shards[0], nil
		}
	}
	return broker.ClusterShardJSON{}, fmt.Errorf("/cluster: no %v", s)
}

// attempt is one publish and what came of it.
type attempt struct {
	value string
	to    string // the broker it was sent to
	pos   client.Position
	err   error // nil: acknowledged at pos
	// sent and answered are when the publish was made and answered.
	sent, answered time.Time
}

// history is every publish a test made on its stream, in the order they
// were answered, and beside them the same publishes and the shard's
// reads recorded for the history checker (package check).
type history struct {
	mu       sync.Mutex
	attempts []attempt
	procs    int // process ids handed out to writers; the test's own is 0

	began time.Time // the checker's times are nanoseconds since
	rec   check.Recorder
	final string // the subscription of checkShard's last final read (the test's goroutine only)
}

func newHistory() *history { return &history{began: time.Now()} }

func (h *history) add(a attempt) {
	h.mu.Lock()
	h.attempts = append(h.attempts, a)
	h.mu.Unlock()
}

// process is a new process id for the checker: one per goroutine that
// publishes.
func (h *history) process() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.procs++
	return h.procs
}

func (h *history) now() int64 { return int64(time.Since(h.began)) }

// invoke records a publish of value to shard 0 of s as begun.
func (h *history) invoke(process int, s client.Stream, value string) check.Handle {
	return h.rec.Invoke(process, h.now(), check.Publish{Shard: checkShard0(s), Value: value})
}

// complete records a publish's answer: acknowledged, refused with what
// client.Ambiguous says was not applied, or of unknown outcome.
func (h *history) complete(op check.Handle, pos client.Position, err error) {
	switch {
	case err == nil:
		op.Ok(h.now(), check.Published{Offset: uint64(pos.Offset)})
	case !client.Ambiguous(err):
		op.Fail(h.now(), err.Error())
	default:
		op.Unknown(h.now(), err.Error())
	}
}

// checkShard0 is shard 0 of s as the checker names it.
func checkShard0(s client.Stream) check.Shard { return check.Shard{Stream: s.String()} }

func (h *history) snapshot() []attempt {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.attempts)
}

// acked counts the acknowledged attempts whose value starts with prefix.
func (h *history) acked(prefix string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, a := range h.attempts {
		if a.err == nil && strings.HasPrefix(a.value, prefix) {
			n++
		}
	}
	return n
}

// publish sends value to the broker's incarnation now and records the
// answer.
func (c *nemesisCluster) publish(ctx context.Context, h *history, s client.Stream, to, value string, within time.Duration) attempt {
	cl := c.client(to)
	pctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	sent, op := time.Now(), h.invoke(0, s, value)
	pos, err := cl.Publish(pctx, s, []byte(value))
	h.complete(op, pos, err)
	a := attempt{value: value, to: to, pos: pos, err: err, sent: sent, answered: time.Now()}
	h.add(a)
	return a
}

// publishUntilAcked publishes to the broker until one is acknowledged,
// each try a value of its own (prefix try N) so that an ambiguous try
// that was applied after all is told apart from the one acknowledged;
// a try refused with what is not retryable fails the test.
func (c *nemesisCluster) publishUntilAcked(ctx context.Context, h *history, s client.Stream, to, prefix string) attempt {
	c.t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for try := 0; ; try++ {
		a := c.publish(ctx, h, s, to, fmt.Sprintf("%s try %d", prefix, try), 10*time.Second)
		if a.err == nil {
			return a
		}
		if !client.Retryable(a.err) && !errors.Is(a.err, context.DeadlineExceeded) {
			c.t.Fatalf("publish %q to %s: %v, which is not retryable", a.value, to, a.err)
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			c.t.Fatalf("no publish to %s acknowledged in time; the last try: %v", to, a.err)
		}
	}
}

// publishAtLeaderUntilAcked is publishUntilAcked at whichever running
// broker a running broker's /cluster names the leader, asked again
// before every try.
func (c *nemesisCluster) publishAtLeaderUntilAcked(ctx context.Context, h *history, s client.Stream, prefix string) attempt {
	c.t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for try := 0; ; try++ {
		to, _ := c.awaitLeader(ctx, s, "")
		a := c.publish(ctx, h, s, to, fmt.Sprintf("%s try %d", prefix, try), 10*time.Second)
		if a.err == nil {
			return a
		}
		if !client.Retryable(a.err) && !errors.Is(a.err, context.DeadlineExceeded) {
			c.t.Fatalf("publish %q to %s: %v, which is not retryable", a.value, to, a.err)
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			c.t.Fatalf("no publish at the leader acknowledged in time; the last try, at %s: %v", to, a.err)
		}
	}
}

// writer publishes one record after the other, from a goroutine, until
// stopped, refused (unless it keeps on) or writerAttemptsMax attempts
// are made: the publishes in flight when a nemesis strikes.
type writer struct {
	stop chan struct{}
	done chan struct{}
	sent int // attempts made, once done
}

// writerAttemptsMax bounds a writer's attempts; writerPause is how long a
// writer that keeps on after a refusal waits before its next publish.
const (
	writerAttemptsMax = 100_000
	writerPause       = 20 * time.Millisecond
)

// writerSpec is what a writer publishes through and how.
type writerSpec struct {
	to      string // where it publishes, for the history: a broker's name, or "cluster"
	publish func(ctx context.Context, value []byte) (client.Position, error)
	within  time.Duration // each publish's deadline
	keepOn  bool          // a refusal does not stop it: it waits writerPause and goes on
}

// startWriter starts a writer publishing to the broker until it is
// stopped or refused.
func (c *nemesisCluster) startWriter(ctx context.Context, h *history, s client.Stream, to, prefix string, within time.Duration) *writer {
	cl := c.client(to)
	return startWriterOf(ctx, h, s, prefix, writerSpec{to: to, within: within,
		publish: func(ctx context.Context, v []byte) (client.Position, error) { return cl.Publish(ctx, s, v) }})
}

// startWriterOf starts a writer of values prefix 0, prefix 1, ... to
// shard 0 of s, each attempt recorded in the history.
func startWriterOf(ctx context.Context, h *history, s client.Stream, prefix string, spec writerSpec) *writer {
	w := &writer{stop: make(chan struct{}), done: make(chan struct{})}
	process := h.process()
	go func() {
		defer close(w.done)
		for i := range writerAttemptsMax {
			select {
			case <-w.stop:
				return
			default:
			}
			value := fmt.Sprintf("%s %d", prefix, i)
			pctx, cancel := context.WithTimeout(ctx, spec.within)
			sent, op := time.Now(), h.invoke(process, s, value)
			pos, err := spec.publish(pctx, []byte(value))
			cancel()
			h.complete(op, pos, err)
			h.add(attempt{value: value, to: spec.to, pos: pos, err: err, sent: sent, answered: time.Now()})
			w.sent++
			switch {
			case err == nil:
			case !spec.keepOn || ctx.Err() != nil:
				return
			default:
				select {
				case <-w.stop:
					return
				case <-time.After(writerPause):
				}
			}
		}
	}()
	return w
}

// end stops the writer and waits for its publish in flight to be
// answered.
func (w *writer) end() int {
	close(w.stop)
	<-w.done
	return w.sent
}

// awaitAcked polls the history until n publishes whose value starts with
// prefix have been acknowledged.
func awaitAcked(t *testing.T, ctx context.Context, h *history, prefix string, n int) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for h.acked(prefix) < n {
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("%d publishes of %q acknowledged, want %d: %v", h.acked(prefix), prefix, n, lastErrors(h, 3))
		}
	}
}

func lastErrors(h *history, n int) []string {
	var out []string
	for _, a := range slices.Backward(h.snapshot()) {
		if a.err != nil && len(out) < n {
			out = append(out, fmt.Sprintf("%q to %s: %v", a.value, a.to, a.err))
		}
	}
	return out
}

// checkShard reads shard 0 of s at its leader from offset 0 up to the
// last acknowledged offset, and has the history checker (package check)
// judge the history against it: every acknowledged record is there at
// the offset it was acknowledged at (else unseen, lost-write, poll-skip,
// duplicate), every record read is one the test published (unexpected),
// each once (duplicate), in offset order (nonmonotonic-poll), and none
// whose publish was refused with what client.Ambiguous says was not
// applied (aborted-read); a publish refused ambiguously or unanswered may
// be there or not. The test fails with the checker's report unless it is
// valid. It returns how many records it read and how many of them were
// not acknowledged.
func (c *nemesisCluster) checkShard(ctx context.Context, h *history, s client.Stream, leader string) (read, unacked int) {
	c.t.Helper()
	t := c.t
	sent := map[string]attempt{}
	var last uint64
	acked := 0
	for _, a := range h.snapshot() {
		sent[a.value] = a
		if a.err == nil {
			acked++
			last = max(last, uint64(a.pos.Offset))
			if a.pos.Shard != 0 {
				t.Fatalf("%q acknowledged on shard %d of a stream of one shard", a.value, a.pos.Shard)
			}
		}
	}
	if acked == 0 {
		t.Fatal("nothing acknowledged to check")
	}
	sub := fmt.Sprintf("final read %d", h.process())
	records := c.readShard(ctx, h, s, leader, sub, last)
	for _, rec := range records {
		if a, ok := sent[rec.Value]; ok && a.err != nil {
			unacked++
			t.Logf("at %s: %q, sent to %s and answered %v, is held at offset %d", leader, rec.Value, a.to, a.err, rec.Offset)
		}
	}
	h.final = sub
	// The round's cache operations are judged with its publishes: the
	// workers go on with the next round's keys.
	var round, all cacheCounts
	if c.load != nil {
		round, all = c.load.endEpoch()
	}
	acks, promotions := c.feedJournals(h, false)
	c.checkJournaled(h, s)
	r := check.Check(h.finalHistory(), check.Options{})
	if !r.Valid() {
		t.Fatalf("at %s: shard 0 read up to offset %d, the history checker: %s", leader, last, &r)
	}
	t.Logf("the history checker: %s; the brokers' journals since the last check: %d acks, %d promotions; the round's cache operations: %s; the run's: %s",
		r.Summary(), acks, promotions, round, all)
	return len(records), unacked
}

// finalHistory is the history with only the last final read of
// checkShard marked Final: the earlier rounds' stand as reads like any
// other (each a subscription owed every record from offset 0).
func (h *history) finalHistory() check.History {
	hist := h.rec.History()
	for i, op := range hist.Ops {
		if in, ok := op.Input.(check.Read); ok && in.Subscription == h.final {
			in.Final = true
			hist.Ops[i].Input = in
		}
	}
	return hist
}

// readShard reads shard 0 of s at the broker from offset 0 until it has
// read a record at or above last, and records it for the checker as one
// read of the subscription named sub.
func (c *nemesisCluster) readShard(ctx context.Context, h *history, s client.Stream, leader, sub string, last uint64) []check.Record {
	t := c.t
	rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	op := h.rec.Invoke(0, h.now(), check.Read{Shard: checkShard0(s), Subscription: sub})
	subscription, err := c.client(leader).Subscribe(rctx, s, 0, client.SubscribeOptions{Start: client.FromEarliest()})
	for try := 0; errors.Is(err, client.ErrNotLeader) && try < 3; try++ {
		// The leadership moved since the caller settled on it (a bridge
		// round's leader may be deposed after the heal): read where it is.
		moved, _ := c.awaitSettledLeader(ctx, s)
		t.Logf("subscribe to shard 0 at %s: %v; reading at %s, the leader now", leader, err, moved)
		leader = moved
		subscription, err = c.client(leader).Subscribe(rctx, s, 0, client.SubscribeOptions{Start: client.FromEarliest()})
	}
	if err != nil {
		t.Fatalf("subscribe to shard 0 at its leader %s: %v", leader, err)
	}
	defer subscription.Close()
	var records []check.Record
	var top uint64
	for len(records) == 0 || top < last {
		ev, err := subscription.Next(rctx)
		if err != nil {
			t.Fatalf("reading shard 0 at its leader %s, after offset %d (%d records read), up to %d, the last acknowledged: %v",
				leader, top, len(records), last, err)
		}
		records = append(records, check.Record{Offset: uint64(ev.Offset), Value: string(ev.Value)})
		top = max(top, uint64(ev.Offset))
	}
	op.Ok(h.now(), check.Delivered{Records: records})
	return records
}

// shardStatus is what the running brokers' /cluster say of s's shard 0
// and of the control plane: for the message of a failure.
func (c *nemesisCluster) shardStatus(s client.Stream) string {
	var out []string
	for _, n := range c.running() {
		st, err := c.clusterStatus(n)
		if err != nil {
			out = append(out, fmt.Sprintf("%s: %v", n, err))
			continue
		}
		line := fmt.Sprintf("%s at revision %d: control plane %+v", n, st.Revision, st.ControlPlane)
		if sh, err := c.shard0(n, s); err == nil {
			j, _ := json.Marshal(sh)
			line += fmt.Sprintf(", shard 0 %s", j)
		}
		out = append(out, line)
	}
	return strings.Join(out, "; ")
}

// The nemesis history records a publish's answer as the client classifies
// it: acknowledged is Ok at its offset, refused with what client.Ambiguous
// says was not applied is Fail, anything else is of unknown outcome.
func TestTheNemesisHistoryRecordsAnswersAsTheClientClassifiesThem(t *testing.T) {
	h := newHistory()
	s := client.Stream{Tenant: "t", Namespace: "nemesis", Name: "s"}
	for _, err := range []error{nil, client.ErrNotSent, context.DeadlineExceeded} {
		h.complete(h.invoke(0, s, fmt.Sprint(err)), client.Position{Offset: 7}, err)
	}
	var got []string
	for _, op := range h.rec.History().Ops {
		got = append(got, op.Outcome.String())
		if op.Outcome == check.Ok && op.Output != (check.Published{Offset: 7}) {
			t.Fatalf("%s: want acknowledged at 7", op)
		}
	}
	if want := []string{"ok", "fail", "unknown"}; !slices.Equal(got, want) {
		t.Fatalf("outcomes %v, want %v", got, want)
	}
}
