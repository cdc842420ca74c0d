package store

import (
	"context"
	"log/slog"
	"slices"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// zapLogger is the logger etcd and its client write to: nothing when lg is
// nil (etcd logs errors even on a clean shutdown), else lg at level and
// above. Felix logs with slog; etcd with zap.
func zapLogger(lg *slog.Logger, level slog.Leveler) *zap.Logger {
	if lg == nil {
		return zap.NewNop()
	}
	if level == nil {
		level = slog.LevelWarn
	}
	return zap.New(&slogCore{h: lg.Handler().WithAttrs([]slog.Attr{slog.String("component", "etcd")}), level: level})
}

// slogCore is a zapcore.Core that hands each entry to a slog.Handler.
type slogCore struct {
	h     slog.Handler
	level slog.Leveler
}

func (c *slogCore) Enabled(l zapcore.Level) bool {
	lv := slogLevel(l)
	return lv >= c.level.Level() && c.h.Enabled(context.Background(), lv)
}

func (c *slogCore) With(fields []zapcore.Field) zapcore.Core {
	return &slogCore{h: c.h.WithAttrs(slogAttrs(fields)), level: c.level}
}

func (c *slogCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	e.Level = levelOf(e)
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c *slogCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	r := slog.NewRecord(e.Time, slogLevel(levelOf(e)), e.Message, 0)
	r.AddAttrs(slogAttrs(fields)...)
	return c.h.Handle(context.Background(), r)
}

func (c *slogCore) Sync() error { return nil }

func slogLevel(l zapcore.Level) slog.Level {
	switch {
	case l <= zapcore.DebugLevel:
		return slog.LevelDebug
	case l == zapcore.InfoLevel:
		return slog.LevelInfo
	case l == zapcore.WarnLevel:
		return slog.LevelWarn
	}
	return slog.LevelError
}

// slogAttrs encodes zap fields as slog attributes, in key order.
func slogAttrs(fields []zapcore.Field) []slog.Attr {
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range fields {
		f.AddTo(enc)
	}
	keys := make([]string, 0, len(enc.Fields))
	for k := range enc.Fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	attrs := make([]slog.Attr, len(keys))
	for i, k := range keys {
		attrs[i] = slog.Any(k, enc.Fields[k])
	}
	return attrs
}

// benignMessages are what an embedded member logs as a warning or an
// error on every ordinary start and stop, with nothing for an operator to
// do: they are logged at debug instead, so what is left at warn and above
// means something.
var benignMessages = map[string]string{
	// The member serves its clients and its metrics on one port; Felix's
	// own broker talks to it in process.
	"Running http and grpc server on single port. This is not recommended for production.": "one port by design",
	// etcd's own auth is off: the store is reached by the brokers only.
	"simple token is not cryptographically signed": "etcd auth is off",
	// A new member's first start has no schema to read yet.
	"Failed to detect schema version":  "a new member",
	"failed to update storage version": "a new member",
	// Close stops the listeners under the servers still accepting.
	"setting up serving from embedded etcd failed.": "closing",
	"stopping insecure grpc server due to error":    "closing",
	"stopped insecure grpc server due to error":     "closing",
}

// levelOf is e's level, debug for a benign message.
func levelOf(e zapcore.Entry) zapcore.Level {
	if _, ok := benignMessages[e.Message]; ok && e.Level < zapcore.DPanicLevel {
		return zapcore.DebugLevel
	}
	return e.Level
}
