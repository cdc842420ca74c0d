package store

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// etcd's warnings and errors reach the broker's log, except the few it
// logs on every ordinary start and stop, which go to debug.
func TestEtcdsBenignMessagesAreLoggedAtDebug(t *testing.T) {
	var buf bytes.Buffer
	lg := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	z := zapLogger(lg, slog.LevelWarn)
	z.Error("failed to update storage version")
	z.Warn("simple token is not cryptographically signed")
	if buf.Len() != 0 {
		t.Fatalf("benign messages logged at warn or above: %s", buf.String())
	}
	z.Warn("a warning that matters")
	z.Error("an error that matters")
	out := buf.String()
	if !strings.Contains(out, "level=WARN msg=\"a warning that matters\"") || !strings.Contains(out, "level=ERROR msg=\"an error that matters\"") {
		t.Fatalf("the other messages: %s", out)
	}
	buf.Reset()
	zapLogger(lg, slog.LevelDebug).Error("failed to update storage version")
	if !strings.Contains(buf.String(), "level=DEBUG") {
		t.Fatalf("a benign message at debug level: %s", buf.String())
	}
}
