package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
)

// TestEmbeddedClusterOfThree runs three members in one process, as three
// brokers on one machine do: a write through one is read through another,
// and a control plane deposed through a third cannot write through its own.
func TestEmbeddedClusterOfThree(t *testing.T) {
	members := startCluster(t, "a", "b", "c")
	sa, sb, sc := members[0].Store(), members[1].Store(), members[2].Store()

	rev := put(t, sa, "k", "v")
	if kv := get(t, sc, "k"); kv.ModRevision != rev || string(kv.Value) != "v" {
		t.Fatalf("read through c: %+v, want the write at %d through a", kv, rev)
	}
	w := watch(t, sc, "cp/", rev+1)

	leaseA := grant(t, sa, time.Minute)
	a := campaign(t, sa, leaseA.ID, "cp-a")
	bWon := campaignAsync(deadline(t), sb, grant(t, sb, time.Minute).ID, "cp-b")
	awaitCandidates(t, sc, 2)
	if err := sc.Revoke(deadline(t), leaseA.ID); err != nil {
		t.Fatal(err)
	}
	b := awaitLeader(t, bWon)
	wantDeposed(t, sa, a, b)
	if got := events(t, w, 1); string(got[0].KV.Value) != "from b" {
		t.Fatalf("c watched %+v, want b's write", got[0].KV)
	}

	// With b and c gone, a has no leader: its watch says so, never goes quiet.
	wa := watch(t, sa, "cp/", revision(t, sb)+1)
	closeAll(members[1:]) // together: each waits up to 1 s for its open peer connections
	if err := watchErr(t, wa); errors.Is(err, ErrClosed) || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a watch on a member without a leader ended with %v, want etcd's no-leader error", err)
	}
}

func closeAll(members []*Embedded) {
	var wg sync.WaitGroup
	for _, m := range members {
		wg.Go(func() { m.Close() })
	}
	wg.Wait()
}

// startCluster starts the members concurrently (each waits for a quorum)
// on free loopback ports; a port taken between picking and binding (by
// another test on the machine) is a retry, never a failure.
func startCluster(t *testing.T, names ...string) []*Embedded {
	t.Helper()
	for range 3 {
		members, err := tryCluster(t, names)
		if err == nil {
			return members
		}
		if !errors.Is(err, syscall.EADDRINUSE) {
			t.Fatal(err)
		}
		t.Logf("retrying on other ports: %v", err)
	}
	t.Fatal("no free loopback ports in three tries")
	return nil
}

func tryCluster(t *testing.T, names []string) ([]*Embedded, error) {
	urls := freeLoopbackURLs(t, len(names))
	initial := make([]string, len(names))
	for i, n := range names {
		initial[i] = n + "=" + urls[i]
	}
	members := make([]*Embedded, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		cfg := testEmbedConfig(t)
		cfg.Name, cfg.InitialCluster = n, strings.Join(initial, ",")
		wg.Go(func() { members[i], errs[i] = StartEmbedded(deadline(t), cfg) })
	}
	wg.Wait()
	for _, m := range members {
		if m != nil {
			t.Cleanup(func() { m.Close() })
		}
	}
	return members, errors.Join(errs...)
}

// freeLoopbackURLs picks n distinct free ports, holding all of them open
// at once so none is picked twice.
func freeLoopbackURLs(t *testing.T, n int) []string {
	urls := make([]string, n)
	for i := range urls {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		urls[i] = "http://" + l.Addr().String()
	}
	return urls
}

// TestEmbeddedMemberWithoutAQuorumGivesUp: one member of three, alone,
// cannot serve; StartEmbedded says so when its ctx ends, and stops it.
func TestEmbeddedMemberWithoutAQuorumGivesUp(t *testing.T) {
	urls := freeLoopbackURLs(t, 3)
	cfg := testEmbedConfig(t)
	cfg.Name = "a"
	cfg.InitialCluster = fmt.Sprintf("a=%s,b=%s,c=%s", urls[0], urls[1], urls[2])
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	m, err := StartEmbedded(ctx, cfg)
	if err == nil {
		m.Close()
		t.Fatal("a member without a quorum started")
	}
	wantErr(t, err, context.DeadlineExceeded)
}

func TestEmbeddedRestartKeepsItsState(t *testing.T) {
	cfg := testEmbedConfig(t)
	cfg.UnsafeNoFsync = false
	m, err := StartEmbedded(deadline(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	rev := put(t, m.Store(), "k", "v")
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if _, open := <-m.Err(); open {
		t.Fatal("Err is not closed after Close")
	}
	m, err = StartEmbedded(deadline(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if kv := get(t, m.Store(), "k"); kv.ModRevision != rev || string(kv.Value) != "v" {
		t.Fatalf("after a restart: %+v, want the write at %d", kv, rev)
	}
	if next := put(t, m.Store(), "k", "w"); next != rev+1 {
		t.Fatalf("the first write after a restart is at %d, want %d", next, rev+1)
	}
}

func TestEmbeddedConfigIsChecked(t *testing.T) {
	for name, cfg := range map[string]EmbedConfig{
		"no directory":            {},
		"a name not in the map":   {Dir: t.TempDir(), Name: "x", InitialCluster: "a=http://127.0.0.1:1"},
		"a peer URL not parsable": {Dir: t.TempDir(), PeerURL: "http://[::1"},
	} {
		if _, err := StartEmbedded(deadline(t), cfg); !isInvalid(err) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	if got := memberURL("a=http://h:1, b=http://h:2", "b"); got != "http://h:2" {
		t.Errorf("memberURL: %q", got)
	}
}

func TestEmbedConfigDefaults(t *testing.T) {
	alone, err := EmbedConfig{Dir: "d"}.etcdConfig()
	if err != nil {
		t.Fatal(err)
	}
	if alone.TickMs != aloneTickMs || alone.ElectionMs != aloneElectionMs || alone.Name != "felix" ||
		alone.InitialCluster != "felix=http://127.0.0.1:0" || alone.AutoCompactionRetention != "10000" {
		t.Fatalf("a cluster of one: ticks %d/%d, name %q, cluster %q, retention %q",
			alone.TickMs, alone.ElectionMs, alone.Name, alone.InitialCluster, alone.AutoCompactionRetention)
	}
	member, err := EmbedConfig{Dir: "d", Name: "b", InitialCluster: "a=http://h:1,b=http://h:2"}.etcdConfig()
	if err != nil {
		t.Fatal(err)
	}
	if member.TickMs != 100 || member.ElectionMs != 1000 || member.AdvertisePeerUrls[0].String() != "http://h:2" {
		t.Fatalf("a member of three: ticks %d/%d, peer %v", member.TickMs, member.ElectionMs, member.AdvertisePeerUrls)
	}
}

// lockedBuffer is an io.Writer for a slog handler that etcd's goroutines
// write to at once.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestEmbeddedLogsGoToTheGivenLogger(t *testing.T) {
	var out lockedBuffer
	cfg := testEmbedConfig(t)
	cfg.Logger = slog.New(slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg.LogLevel = slog.LevelInfo
	m, err := StartEmbedded(deadline(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	logs := out.String()
	if !strings.Contains(logs, `"component":"etcd"`) || !strings.Contains(logs, `"msg":"configuring peer listeners"`) {
		t.Fatalf("etcd's info logs did not reach the logger:\n%.2000s", logs)
	}
	if strings.Contains(logs, `"level":"DEBUG"`) {
		t.Fatal("a debug log passed LogLevel Info")
	}
}

func TestEtcdIsQuietWithoutALogger(t *testing.T) {
	if zapLogger(nil, nil).Core().Enabled(zapcore.ErrorLevel) {
		t.Fatal("with no logger, etcd's errors are logged somewhere")
	}
	core := zapLogger(slog.Default(), nil).Core()
	if core.Enabled(zapcore.InfoLevel) || !core.Enabled(zapcore.WarnLevel) {
		t.Fatal("a logger with no level does not start at Warn")
	}
}

func TestDialFailsWithinItsContext(t *testing.T) {
	_, err := Dial(deadline(t), DialConfig{})
	wantErr(t, err, ErrInvalid)
	closed := freeLoopbackURLs(t, 1) // closed by now: nothing listens
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = Dial(ctx, DialConfig{Endpoints: closed})
	wantErr(t, err, context.DeadlineExceeded)
}
