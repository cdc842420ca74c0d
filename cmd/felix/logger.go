package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
)

// newLogger builds the broker's logger: JSON in production, text on a
// terminal, at the given level.
func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(strings.ToUpper(level))); err != nil {
		return nil, fmt.Errorf("log level %q: debug, info, warn, error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	jsonOpts := &slog.HandlerOptions{Level: lv, ReplaceAttr: durationsWithUnits}
	switch format {
	case "json":
		return slog.New(slog.NewJSONHandler(w, jsonOpts)), nil
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "auto", "":
		if f, ok := w.(*os.File); ok && isTerminal(f) {
			return slog.New(slog.NewTextHandler(w, opts)), nil
		}
		return slog.New(slog.NewJSONHandler(w, jsonOpts)), nil
	}
	return nil, fmt.Errorf("log format %q: auto, text, json", format)
}

// durationsWithUnits writes a duration as the text format does ("10.4ms"),
// not as JSON's bare count of nanoseconds.
func durationsWithUnits(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		a.Value = slog.StringValue(a.Value.Duration().String())
	}
	return a
}
