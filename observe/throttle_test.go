package observe

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// A run of the same error writes its first line, then one line per quiet
// period saying how many were held back; other messages and info lines
// are not held back by it.
func TestThrottleFoldsRepeatedErrors(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	var buf bytes.Buffer
	text := slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: dropTime})
	log := slog.New(Throttle(text, ThrottleOptions{Every: 10 * time.Second, Now: clk.Now})).With("shard", 3)
	for range 5 {
		log.Error("fsync failed", "err", "EIO")
		log.Info("record appended")
	}
	log.Warn("client reconnecting")
	clk.Advance(11 * time.Second)
	log.Error("fsync failed", "err", "EIO")
	log.Error("fsync failed", "err", "EIO")
	want := []string{
		`level=ERROR msg="fsync failed" shard=3 err=EIO`,
		`level=INFO msg="record appended" shard=3`,
		`level=INFO msg="record appended" shard=3`,
		`level=INFO msg="record appended" shard=3`,
		`level=INFO msg="record appended" shard=3`,
		`level=INFO msg="record appended" shard=3`,
		`level=WARN msg="client reconnecting" shard=3`,
		`level=ERROR msg="fsync failed" shard=3 err=EIO suppressed=4`,
	}
	got := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func dropTime(_ []string, a slog.Attr) slog.Attr {
	if a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}
