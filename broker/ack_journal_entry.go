package broker

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// An ack journal (ClusterConfig.AckJournal) is JSON lines, one
// JournalEntry each, version 1 (the field names are frozen):
//
//	{"v":1,"kind":"ack","broker":"a","object":"stream/t/ns/s","shard":0,"gen":3,"first":10,"last":12,"t":..,"until":..,"lease":..}
//	{"v":1,"kind":"promotion","broker":"b","object":"stream/t/ns/s","shard":0,"gen":4,"t":..}
//
// Times are CLOCK_MONOTONIC readings in nanoseconds: one clock for every
// process on a host, so one broker's acks and another's promotions
// compare.

// Kinds of JournalEntry.
const (
	// JournalAck: the broker acknowledged offsets First..Last of a log at
	// Generation at Time, within a lease whose window ends at Until,
	// granted for Lease.
	JournalAck = "ack"
	// JournalPromotion: the broker's control plane began promoting the
	// shard to Generation: its first write, no leader named, sent at Time
	// and applied.
	JournalPromotion = "promotion"
)

// journalVersion is the format's version, written on every line.
const journalVersion = 1

// JournalEntry is one line of an ack journal.
type JournalEntry struct {
	Version    int    `json:"v"`
	Kind       string `json:"kind"`
	Broker     string `json:"broker"`
	Object     string `json:"object"` // cluster.ObjectID's String: kind/tenant/namespace/name
	Shard      uint32 `json:"shard"`
	Part       string `json:"part,omitempty"` // an ack's log's part: "" the primary
	Generation uint64 `json:"gen"`
	First      int64  `json:"first,omitempty"`
	Last       int64  `json:"last,omitempty"`
	Time       int64  `json:"t"`
	Until      int64  `json:"until,omitempty"`
	Lease      int64  `json:"lease,omitempty"` // nanoseconds
}

// append appends e's line to b.
func (e JournalEntry) append(b []byte) []byte {
	e.Version = journalVersion
	line, err := json.Marshal(e)
	if err != nil {
		panic(fmt.Sprintf("felix/broker: a journal entry does not encode: %v: a bug", err))
	}
	return append(append(b, line...), '\n')
}

// ReadAckJournal reads a journal's entries in order. A last line with no
// newline (the process died mid-write) is left out and counted in torn;
// any other line that does not parse is an error.
func ReadAckJournal(r io.Reader) (entries []JournalEntry, torn int, err error) {
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		switch {
		case err == io.EOF && len(line) > 0:
			return entries, 1, nil
		case err == io.EOF:
			return entries, 0, nil
		case err != nil:
			return entries, 0, err
		}
		var e JournalEntry
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			return entries, 0, fmt.Errorf("felix/broker: ack journal line %d: %w", n, err)
		}
		if e.Version != journalVersion || (e.Kind != JournalAck && e.Kind != JournalPromotion) {
			return entries, 0, fmt.Errorf("felix/broker: ack journal line %d: version %d kind %q", n, e.Version, e.Kind)
		}
		entries = append(entries, e)
	}
}
