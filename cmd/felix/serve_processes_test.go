//go:build unix

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/felixbroker/felix/client"
)

// Three `felix serve` processes on --cluster, an embedded etcd member each,
// on loopback, are one cluster: a stream of 6 shards created through one is
// led by each of them, every broker names the same leaders, records
// published through each are read back at the leader of their shard, at
// the offsets acknowledged, and nothing else; a subscribe to a broker that
// does not lead the shard is refused with the leader's address.
func TestThreeServeProcessesAreOneCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three felix processes whose etcd members elect a leader at etcd's default timing: seconds, more under -race")
	}
	began := time.Now()
	names := []string{"a", "b", "c"}
	addrs := freeAddrs(t, 5*len(names))
	var members []string
	for i, n := range names {
		members = append(members, n+"="+addrs[5*i+3])
	}
	procs := make([]*serveProcess, len(names))
	for i, n := range names {
		procs[i] = &serveProcess{name: n, addr: addrs[5*i], adminAddr: addrs[5*i+1], peerAddr: addrs[5*i+2],
			etcdPeerAddr: addrs[5*i+3], etcdClientAddr: addrs[5*i+4], dataDir: t.TempDir()}
	}
	startServeProcesses(t, procs, strings.Join(members, ","))
	for _, p := range procs {
		p.awaitReady(t, 60*time.Second)
	}
	t.Logf("three processes ready %v after the start", time.Since(began).Round(time.Millisecond))

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	clients := map[string]*client.Client{} // by client address
	for _, p := range procs {
		clients[p.addr] = dialServed(t, p.addr)
	}
	const shards, perBroker = 6, 20
	s := client.Stream{Tenant: "t", Namespace: "n", Name: "procs"}
	if _, err := clients[procs[0].addr].CreateStream(ctx, s, client.StreamConfig{Shards: shards}); err != nil {
		t.Fatalf("create through a: %v", err)
	}

	// Every broker names a leader for every shard, the same one.
	var leaders []client.ShardInfo // as the first broker describes them
	for _, p := range procs {
		info := awaitLeaders(t, ctx, clients[p.addr], s, shards)
		if leaders == nil {
			leaders = info.Shards
			continue
		}
		for sh, si := range info.Shards {
			if si.LeaderID != leaders[sh].LeaderID || si.LeaderAddr != leaders[sh].LeaderAddr {
				t.Fatalf("shard %d: %s says its leader is %s at %s, %s said %s at %s", sh, p.name,
					si.LeaderID, si.LeaderAddr, procs[0].name, leaders[sh].LeaderID, leaders[sh].LeaderAddr)
			}
		}
	}
	byAddr := map[string]*serveProcess{}
	for _, p := range procs {
		byAddr[p.addr] = p
	}
	led := map[string]int{}
	for sh, si := range leaders {
		p := byAddr[si.LeaderAddr]
		if p == nil || p.name != si.LeaderID {
			t.Fatalf("shard %d: led by %q at %s, not one of the brokers started", sh, si.LeaderID, si.LeaderAddr)
		}
		led[p.name]++
	}
	for _, p := range procs {
		if led[p.name] == 0 {
			t.Fatalf("broker %s leads no shard: the leaders are %+v", p.name, leaders)
		}
	}

	// 20 keyed records through each broker, over every shard.
	type record struct{ key, value string }
	acked := map[client.Position]record{}
	perShard := make([]int, shards)
	for _, p := range procs {
		for i := range perBroker {
			key := keyOnShard(fmt.Sprintf("%s-%d", p.name, i), i%shards, shards)
			value := fmt.Sprintf("record %d through %s", i, p.name)
			pos, err := clients[p.addr].Publish(ctx, s, []byte(value), client.WithKey([]byte(key)))
			if err != nil {
				t.Fatalf("publish %q through %s: %v", value, p.name, err)
			}
			if int(pos.Shard) != i%shards {
				t.Fatalf("key %q acknowledged on shard %d, want %d", key, pos.Shard, i%shards)
			}
			if prev, dup := acked[pos]; dup {
				t.Fatalf("%q and %q both acknowledged at %+v", prev.value, value, pos)
			}
			acked[pos] = record{key, value}
			perShard[pos.Shard]++
		}
	}

	// Each shard's leader holds exactly what was acknowledged on it.
	for sh, si := range leaders {
		c := clients[si.LeaderAddr]
		info, err := c.DescribeStream(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		if next := info.Shards[sh].NextOffset; next != int64(perShard[sh]) {
			t.Fatalf("shard %d: its leader %s's next offset is %d, %d records were acknowledged on it", sh, si.LeaderID, next, perShard[sh])
		}
		sub, err := c.Subscribe(ctx, s, sh, client.SubscribeOptions{Start: client.FromEarliest()})
		if err != nil {
			t.Fatalf("subscribe to shard %d at its leader %s: %v", sh, si.LeaderID, err)
		}
		for off := range int64(perShard[sh]) {
			ev, err := sub.Next(ctx)
			if err != nil {
				t.Fatalf("shard %d at %s: after %d records: %v", sh, si.LeaderID, off, err)
			}
			want, ok := acked[client.Position{Shard: sh, Offset: ev.Offset}]
			if ev.Offset != off || ev.Missed != 0 || !ok || string(ev.Key) != want.key || string(ev.Value) != want.value {
				t.Fatalf("shard %d at %s: read %q (key %q) at offset %d (missed %d), want %q (key %q) at %d",
					sh, si.LeaderID, ev.Value, ev.Key, ev.Offset, ev.Missed, want.value, want.key, off)
			}
		}
		sub.Close()
	}

	// A broker that does not lead a shard refuses its subscribe, naming
	// the leader.
	for sh, si := range leaders {
		other := procs[0]
		for _, p := range procs {
			if p.addr != si.LeaderAddr {
				other = p
				break
			}
		}
		sub, err := clients[other.addr].Subscribe(ctx, s, sh, client.SubscribeOptions{Start: client.FromEarliest()})
		if err == nil {
			sub.Close()
			t.Fatalf("shard %d: a subscribe at %s, which does not lead it, was accepted", sh, other.name)
		}
		var se *client.ServerError
		if !errors.Is(err, client.ErrNotLeader) || !errors.As(err, &se) || se.Details.LeaderAddr != si.LeaderAddr {
			t.Fatalf("shard %d: a subscribe at %s, which does not lead it: %v (details %+v), want not_leader naming %s",
				sh, other.name, err, detailsOf(se), si.LeaderAddr)
		}
	}
	t.Logf("%d records through three processes read back at their leaders (%v led), %v after the start",
		len(acked), led, time.Since(began).Round(time.Millisecond))
}

// serveProcess is one `felix serve` child process and what it was given.
type serveProcess struct {
	name                                    string
	addr, adminAddr, peerAddr, etcdPeerAddr string
	etcdClientAddr                          string // fixed: etcd's own 127.0.0.1:0 could take a port chosen for another
	dataDir                                 string
	cmd                                     *exec.Cmd
	out                                     *lockedBuffer // its standard output and error together
	done                                    chan struct{} // closed once it has exited and been waited for
	waitErr                                 error         // Wait's answer, once done
	stopped                                 time.Time     // when it had exited, once done
}

// startServeProcesses starts every process at once (each etcd member waits
// for the others), running this test binary as felix (TestMain), and
// stops them when the test ends: SIGTERM to all, then up to 20 s for each
// to exit before SIGKILL. A process that does not exit 0 fails the test,
// and a failed test shows what each printed.
func startServeProcesses(t *testing.T, procs []*serveProcess, cluster string) {
	t.Helper()
	// The children's standard input: they stop when it ends, that is when
	// this process is gone, even if these cleanups never run.
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdinR.Close() // the children have their own copies
	env := []string{runMainEnv + "=1", exitWithStdinEnv + "=1"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FELIX_") { // no setting of the caller's leaks into the brokers
			env = append(env, kv)
		}
	}
	var started []*serveProcess
	t.Cleanup(func() {
		stopServeProcesses(t, started)
		stdinW.Close()
		if t.Failed() {
			for _, p := range started {
				t.Logf("broker %s (pid %d) printed:\n%s", p.name, p.cmd.Process.Pid, tail(p.out.String(), 16<<10))
			}
		}
	})
	for _, p := range procs {
		p.cmd = exec.Command(os.Args[0], "serve", "--data", p.dataDir, "--addr", p.addr, "--admin-addr", p.adminAddr,
			"--peer-addr", p.peerAddr, "--broker-id", p.name, "--cluster", cluster, "--log-level", "warn",
			"--etcd-client-addr", p.etcdClientAddr)
		p.cmd.Env = env
		p.out = &lockedBuffer{}
		p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = stdinR, p.out, p.out
		if err := p.cmd.Start(); err != nil {
			t.Fatalf("start broker %s: %v", p.name, err)
		}
		p.done = make(chan struct{})
		go func() {
			p.waitErr = p.cmd.Wait()
			p.stopped = time.Now()
			close(p.done)
		}()
		started = append(started, p)
	}
}

// stopServeProcesses stops the processes together, as an operator stops a
// cluster (one after the other, the last would wait for an etcd quorum
// that is gone), and checks that each exited 0. It signals only the
// processes it was given, by their pid, and only while they have not been
// waited for (os.Process refuses a signal after that).
func stopServeProcesses(t *testing.T, procs []*serveProcess) {
	began := time.Now()
	for _, p := range procs {
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
			t.Errorf("SIGTERM to broker %s (pid %d): %v", p.name, p.cmd.Process.Pid, err)
		}
	}
	deadline := time.NewTimer(20 * time.Second)
	defer deadline.Stop()
	for _, p := range procs {
		select {
		case <-p.done:
		case <-deadline.C:
			t.Errorf("broker %s (pid %d) had not exited 20s after SIGTERM: killed", p.name, p.cmd.Process.Pid)
			for _, q := range procs {
				q.cmd.Process.Kill()
			}
			<-p.done
		}
		if p.waitErr != nil {
			t.Errorf("broker %s (pid %d) stopped with %v", p.name, p.cmd.Process.Pid, p.waitErr)
		}
	}
	var took []string
	for _, p := range procs {
		took = append(took, fmt.Sprintf("%s %v", p.name, p.stopped.Sub(began).Round(time.Millisecond)))
	}
	t.Logf("the processes exited after SIGTERM in: %s", strings.Join(took, ", "))
}

// awaitReady polls the process's /readyz until it answers 200, failing
// the test if the process exits first or the deadline passes.
func (p *serveProcess) awaitReady(t *testing.T, within time.Duration) {
	t.Helper()
	hc := &http.Client{Timeout: 2 * time.Second}
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	last := "no answer yet"
	for {
		resp, err := hc.Get("http://" + p.adminAddr + "/readyz")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			last = fmt.Sprintf("%s: %s", resp.Status, bytes.TrimSpace(body))
		} else {
			last = err.Error()
		}
		select {
		case <-tick.C:
		case <-p.done:
			t.Fatalf("broker %s exited (%v) before it was ready; last /readyz: %s; it printed:\n%s", p.name, p.waitErr, last, tail(p.out.String(), 8<<10))
		case <-deadline.C:
			t.Fatalf("broker %s not ready within %v; last /readyz: %s; it printed:\n%s", p.name, within, last, tail(p.out.String(), 8<<10))
		}
	}
}

// awaitLeaders polls DescribeStream until it names a leader for each of
// the stream's shards.
func awaitLeaders(t *testing.T, ctx context.Context, c *client.Client, s client.Stream, shards int) client.StreamInfo {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		info, err := c.DescribeStream(ctx, s)
		if err == nil && len(info.Shards) == shards {
			all := true
			for _, si := range info.Shards {
				all = all && si.LeaderID != "" && si.LeaderAddr != ""
			}
			if all {
				return info
			}
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("%s does not name a leader for every shard: %+v %v", c.Addr(), info, err)
		}
	}
}

// keyOnShard is the first key prefix-j (j = 0, 1, ...) that routes to
// shard of shards.
func keyOnShard(prefix string, shard, shards int) string {
	for j := 0; ; j++ {
		if k := fmt.Sprintf("%s-%d", prefix, j); client.ShardFor([]byte(k), shards) == shard {
			return k
		}
	}
}

// freeAddrs returns n distinct loopback addresses whose ports were free a
// moment ago: every listener stays open until all n are chosen, so no
// port is handed out twice.
func freeAddrs(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		out = append(out, ln.Addr().String())
	}
	return out
}

func detailsOf(se *client.ServerError) any {
	if se == nil {
		return nil
	}
	return se.Details
}

// tail is the last n bytes of s.
func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
