package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// A JSON log line's durations carry their unit, as the text format's do.
func TestAJSONLogLinesDurationsCarryUnits(t *testing.T) {
	var buf bytes.Buffer
	log, err := newLogger(&buf, "json", "info")
	if err != nil {
		t.Fatal(err)
	}
	log.Info("cache shard open", "rebuild", 10400*time.Microsecond, "records", 3)
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("%v: %s", err, buf.String())
	}
	if line["rebuild"] != "10.4ms" || line["records"] != float64(3) {
		t.Fatalf(`logged %s, want rebuild "10.4ms" and records 3`, strings.TrimSpace(buf.String()))
	}
}
