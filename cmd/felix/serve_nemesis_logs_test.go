//go:build unix

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/felixbroker/felix/client"
)

// The nemeses' logs, kept for diagnosis: with FELIX_NEMESIS_LOGS set to a
// directory, each run writes under DIR/<test>-<start time>/ one folder a
// round (round-00, round-01, ...; "start" before the first), and in it
// each broker's standard output and error while that round ran
// (a.log, b.log, c.log: a restarted broker appends to its round's file)
// and timeline.log: the test's own events (the fault, the leader named,
// the first acknowledgement) beside what a poller saw every
// nemesisTimelinePoll: each running broker's /cluster (its control
// plane, the shard's leader and generation, the store revision it read)
// and each etcd member's raft leader and term, each line when it
// changed, in milliseconds since the round began. FELIX_NEMESIS_LOG_LEVEL
// sets the brokers' --log-level (warn unless set). Unset, nothing is
// written and make test runs as before.
const (
	nemesisLogsEnv     = "FELIX_NEMESIS_LOGS"
	nemesisLogLevelEnv = "FELIX_NEMESIS_LOG_LEVEL"
)

// nemesisTimelinePoll is how often the timeline's poller asks.
const nemesisTimelinePoll = 50 * time.Millisecond

func nemesisLogLevel() string {
	if lv := os.Getenv(nemesisLogLevelEnv); lv != "" {
		return lv
	}
	return "warn"
}

// nemesisLogs is one run's kept logs; nil keeps none (every method is a
// no-op on nil).
type nemesisLogs struct {
	t   *testing.T
	dir string

	mu      sync.Mutex
	folder  string              // the round's
	began   time.Time           // the round's start
	files   map[string]*os.File // the brokers' in this round, and the timeline's
	stopped chan struct{}       // closes the round's poller
	polling sync.WaitGroup
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// newNemesisLogs is the run's logs under FELIX_NEMESIS_LOGS, or nil.
func newNemesisLogs(t *testing.T) *nemesisLogs {
	root := os.Getenv(nemesisLogsEnv)
	if root == "" {
		return nil
	}
	dir := filepath.Join(root, unsafeName.ReplaceAllString(t.Name(), "_")+"-"+time.Now().UTC().Format("20060102T150405"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("%s: %v", nemesisLogsEnv, err)
	}
	l := &nemesisLogs{t: t, dir: dir, files: map[string]*os.File{}}
	l.open("start")
	t.Logf("the brokers' logs and each round's timeline are kept under %s", dir)
	t.Cleanup(func() { l.close() })
	return l
}

// open starts the folder's files, closing the round before's; l.mu held
// or l not shared yet.
func (l *nemesisLogs) open(folder string) {
	for _, f := range l.files {
		f.Close()
	}
	clear(l.files)
	l.folder, l.began = filepath.Join(l.dir, folder), time.Now()
	if err := os.MkdirAll(l.folder, 0o755); err != nil {
		l.t.Errorf("%s: %v", nemesisLogsEnv, err)
	}
}

// file is the round's file of that name, opened for appending; l.mu held.
func (l *nemesisLogs) file(name string) *os.File {
	if f := l.files[name]; f != nil {
		return f
	}
	f, err := os.OpenFile(filepath.Join(l.folder, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil
	}
	l.files[name] = f
	return f
}

// writer is where the broker's output goes beside its buffer: the file
// of the round running when each write comes.
func (l *nemesisLogs) writer(broker string) io.Writer {
	if l == nil {
		return io.Discard
	}
	return roundWriter{l, broker}
}

type roundWriter struct {
	l      *nemesisLogs
	broker string
}

func (w roundWriter) Write(p []byte) (int, error) {
	w.l.mu.Lock()
	defer w.l.mu.Unlock()
	if f := w.l.file(w.broker); f != nil {
		f.Write(p)
	}
	return len(p), nil
}

// event writes a line to the round's timeline: the milliseconds since the
// round began, the wall clock (the brokers' logs are on it), the text.
func (l *nemesisLogs) event(format string, args ...any) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if f := l.file("timeline"); f != nil {
		fmt.Fprintf(f, "%8.3f %s %s\n", now.Sub(l.began).Seconds(), now.UTC().Format("15:04:05.000"), fmt.Sprintf(format, args...))
	}
}

// round ends the round before (its poller stopped, its files closed) and
// begins round n's, whose poller watches s on c until the next round or
// the end.
func (l *nemesisLogs) round(c *nemesisCluster, s client.Stream, n int, what string) {
	if l == nil {
		return
	}
	l.stopPoller()
	l.mu.Lock()
	l.open(fmt.Sprintf("round-%02d", n))
	l.stopped = make(chan struct{})
	stopped := l.stopped
	l.mu.Unlock()
	l.event("round %d begins: %s", n, what)
	l.polling.Go(func() { l.poll(c, s, stopped) })
}

func (l *nemesisLogs) stopPoller() {
	l.mu.Lock()
	if l.stopped != nil {
		close(l.stopped)
		l.stopped = nil
	}
	l.mu.Unlock()
	l.polling.Wait()
}

func (l *nemesisLogs) close() {
	l.stopPoller()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, f := range l.files {
		f.Close()
	}
	clear(l.files)
}

// poll writes to the timeline what changed at each broker and each etcd
// member since the last poll, until stopped.
func (l *nemesisLogs) poll(c *nemesisCluster, s client.Stream, stopped chan struct{}) {
	seen := map[string]string{}
	members := map[string]*clientv3.Client{}
	ids := map[uint64]string{} // etcd member ids by broker, from each member's own Status
	defer func() {
		for _, m := range members {
			m.Close()
		}
	}()
	tick := time.NewTicker(nemesisTimelinePoll)
	defer tick.Stop()
	for {
		for _, n := range []string{"a", "b", "c"} {
			if !slices.Contains(c.running(), n) {
				l.changed(seen, "broker "+n, "not running")
				l.changed(seen, "etcd "+n, "not running")
				continue
			}
			l.changed(seen, "broker "+n, c.viewOf(n, s))
			l.changed(seen, "etcd "+n, c.etcdView(members, ids, n))
		}
		select {
		case <-stopped:
			return
		case <-tick.C:
		}
	}
}

// changed writes what key says now if it differs from the last.
func (l *nemesisLogs) changed(seen map[string]string, key, now string) {
	if seen[key] == now {
		return
	}
	seen[key] = now
	l.event("%s: %s", key, now)
}

// viewOf is what the broker's /cluster says of the control plane and of
// s's shard 0, in a line.
func (c *nemesisCluster) viewOf(name string, s client.Stream) string {
	st, err := c.clusterStatus(name)
	if err != nil {
		return "/cluster: " + shortErr(err)
	}
	cp := "none"
	if st.ControlPlane != nil {
		cp = fmt.Sprintf("%s epoch %d", st.ControlPlane.Broker, st.ControlPlane.Epoch)
	}
	sh, err := c.shard0(name, s)
	if err != nil {
		return fmt.Sprintf("control plane %s; shard 0: %s", cp, shortErr(err))
	}
	leader := "none"
	if sh.Leader != nil {
		leader = sh.Leader.Broker
		if !sh.LeaderLive {
			leader += " (not live)"
		}
	}
	return fmt.Sprintf("control plane %s; shard 0 leader %s generation %d (revision %d)", cp, leader, sh.Generation, st.Revision)
}

// etcdView is the etcd member's raft leader and term, as its Status says.
func (c *nemesisCluster) etcdView(members map[string]*clientv3.Client, ids map[uint64]string, name string) string {
	c.mu.Lock()
	addr := c.etcdClient[name]
	c.mu.Unlock()
	m := members[name]
	if m == nil {
		var err error
		m, err = clientv3.New(clientv3.Config{Endpoints: []string{"http://" + addr}, DialTimeout: time.Second,
			Logger: zap.NewNop()})
		if err != nil {
			return "dial: " + shortErr(err)
		}
		members[name] = m
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	st, err := m.Status(ctx, "http://"+addr)
	if err != nil {
		return "status: " + shortErr(err)
	}
	ids[st.Header.MemberId] = name
	leader := "none"
	if st.Leader != 0 {
		leader = ids[st.Leader]
		if leader == "" {
			leader = fmt.Sprintf("%x", st.Leader)
		}
	}
	return fmt.Sprintf("raft leader %s term %d", leader, st.RaftTerm)
}

// shortErr is err in a line, without the addresses' noise.
func shortErr(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 && len(s) > 120 {
		s = s[i+2:]
	}
	return s
}
