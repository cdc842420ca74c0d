package main

import (
	"log/slog"

	"github.com/felixbroker/felix/observe"
)

// throttled folds runs of identical warnings and errors (a failing disk
// reports every fsync) into one line per 10 seconds with a count.
func throttled(l *slog.Logger) *slog.Logger {
	if l == nil {
		return nil
	}
	return slog.New(observe.Throttle(l.Handler(), observe.ThrottleOptions{}))
}
