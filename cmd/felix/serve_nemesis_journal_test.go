//go:build unix

package main

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/felixbroker/felix/broker"
	"github.com/felixbroker/felix/check"
	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/replica"
)

// The brokers' side of a nemesis run (issue 16): every broker process is
// started with its ack journal on (broker.AckJournalEnv), so each one
// writes, to a file of its own, every acknowledgement its leaderships
// send (with the lease window it relied on) and every promotion its
// control plane begins. Each round's check reads what the journals hold
// by then and records it beside the clients' operations, and the run's
// end reads the rest once the brokers have stopped, a killed
// incarnation's file too. A broker writes each line before it sends the
// ack the line records, so a kill -9 loses none: every publish a client
// saw acknowledged must be in a journal by the time the client has its
// answer (each round's check and the run's end check it: the wiring
// cannot fail unseen). So the history checker judges, across the
// real processes, two brokers acknowledging at one generation
// (double-ack), an acknowledgement outside 3L/4 of its lease (late-ack)
// and one sent once a promotion above its generation had begun
// (ack-after-promotion): the times are CLOCK_MONOTONIC, one clock for
// every process on the host. (They are not the clients' operation times,
// which no ack is compared with.)

// ackJournals are the journal files of a run's brokers, under one
// prefix, and how far each has been read.
type ackJournals struct {
	prefix string
	read   map[string]int64   // file -> the bytes of whole lines fed
	torn   int                // last lines cut short, counted at the end
	byLog  map[string]logAcks // acks fed by log (object, shard and part), for the run's figures
	// spans are the offsets each log's acks covered, by the log's key.
	spans map[string][][2]int64
}

// newAckJournals makes the run's journal prefix: its files go in a
// directory of the test's own.
func newAckJournals(t *testing.T) *ackJournals {
	return &ackJournals{prefix: filepath.Join(t.TempDir(), "acks"), read: map[string]int64{}, byLog: map[string]logAcks{},
		spans: map[string][][2]int64{}}
}

// env is the environment variable that turns a broker's journal on.
func (j *ackJournals) env() string { return broker.AckJournalEnv + "=" + j.prefix }

// feed records in rec what the journals hold past what was fed before,
// whole lines only, and returns how many acks and promotions it fed. At
// the end (every broker stopped), a last line without its newline is
// counted torn; before it, it is left to be read whole next time.
func (j *ackJournals) feed(rec *check.Recorder, end bool) (acks, promotions int, err error) {
	files, err := filepath.Glob(j.prefix + ".*.jsonl")
	if err != nil {
		return 0, 0, err
	}
	slices.Sort(files)
	for _, name := range files {
		a, p, err := j.feedFile(rec, name, end)
		if err != nil {
			return acks, promotions, fmt.Errorf("%s: %w", filepath.Base(name), err)
		}
		acks, promotions = acks+a, promotions+p
	}
	return acks, promotions, nil
}

func (j *ackJournals) feedFile(rec *check.Recorder, name string, end bool) (acks, promotions int, err error) {
	f, err := os.Open(name)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	if _, err := f.Seek(j.read[name], io.SeekStart); err != nil {
		return 0, 0, err
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return 0, 0, err
	}
	whole := b[:bytes.LastIndexByte(b, '\n')+1]
	if end && len(whole) < len(b) {
		j.torn++
	}
	entries, _, err := broker.ReadAckJournal(bytes.NewReader(whole))
	if err != nil {
		return 0, 0, err
	}
	j.read[name] += int64(len(whole))
	for _, e := range entries {
		if recordJournalEntry(rec, e) {
			acks++
			k := journalLogKey(e.Object, e.Shard, e.Part)
			j.byLog[k] = logAcks{acks: j.byLog[k].acks + 1, offsets: j.byLog[k].offsets + e.Last - e.First + 1}
			j.spans[k] = append(j.spans[k], [2]int64{e.First, e.Last})
		} else {
			promotions++
		}
	}
	return acks, promotions, nil
}

// journalLogKey names one log: its object, shard and part.
func journalLogKey(object string, shard uint32, part string) string {
	k := fmt.Sprintf("%s/%d", object, shard)
	if part != "" {
		k += " " + part
	}
	return k
}

// unjournaled are the offsets of the log given that no ack journaled
// covers.
func (j *ackJournals) unjournaled(object string, shard uint32, offsets []int64) []int64 {
	spans := slices.Clone(j.spans[journalLogKey(object, shard, "")])
	slices.SortFunc(spans, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
	reach := make([]int64, len(spans)) // reach[i]: the highest last of spans[:i+1]
	for i, sp := range spans {
		reach[i] = sp[1]
		if i > 0 {
			reach[i] = max(reach[i], reach[i-1])
		}
	}
	var out []int64
	for _, o := range offsets {
		i := sort.Search(len(spans), func(i int) bool { return spans[i][0] > o }) - 1
		if i < 0 || reach[i] < o {
			out = append(out, o)
		}
	}
	return out
}

// logAcks are the acks of one log, and the offsets they covered.
type logAcks struct {
	acks    int
	offsets int64
}

// figures are the acks fed by log, in order.
func (j *ackJournals) figures() string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(j.byLog)) {
		out = append(out, fmt.Sprintf("%s %d (of %d offsets)", k, j.byLog[k].acks, j.byLog[k].offsets))
	}
	return strings.Join(out, ", ")
}

// recordJournalEntry records one journal entry as the checker's Ack or
// Promotion, and reports which (true: an ack). An ack's lease is sent
// where its window ends less 3L/4 (replica.AckWindow): the check's
// [LeaseSent, LeaseSent + 3L/4] is the window the broker checked. Every
// part of a shard (its records, its groups', a cache's counters) is the
// shard: a promotion replaces them together.
func recordJournalEntry(rec *check.Recorder, e broker.JournalEntry) bool {
	s := check.Shard{Stream: e.Object, Index: e.Shard}
	if e.Kind == broker.JournalPromotion {
		rec.Promotion(check.Promotion{Shard: s, Generation: e.Generation, Time: e.Time})
		return false
	}
	rec.Ack(check.Ack{Shard: s, Broker: e.Broker, Generation: e.Generation, Offset: uint64(e.First),
		Time: e.Time, LeaseSent: e.Until - int64(replica.AckWindow(time.Duration(e.Lease))), Lease: e.Lease})
	return true
}

// feedJournals feeds the journals to h's recorder; the test fails if
// one cannot be read.
func (c *nemesisCluster) feedJournals(h *history, end bool) (acks, promotions int) {
	c.t.Helper()
	acks, promotions, err := c.journals.feed(&h.rec, end)
	if err != nil {
		c.t.Fatalf("the brokers' ack journals: %v", err)
	}
	return acks, promotions
}

// The journals are read as a nemesis reads them, through the same feed:
// broker a acknowledging at generation 1 after broker b's control plane
// began promoting the shard to 2 is reported (ack-after-promotion); the
// same lines with a's ack before the promotion are valid. Lines are fed
// once each, a line still being written waits for its newline, a last
// line cut short is counted torn at the end, and an acknowledged offset
// no journaled ack covers is found.
func TestTheNemesisFeedsTheBrokersJournalsToTheChecker(t *testing.T) {
	const (
		ackA1      = `{"v":1,"kind":"ack","broker":"a","object":"stream/t/nemesis/s","shard":0,"gen":1,"first":%d,"last":%d,"t":%d,"until":5000000000,"lease":1000000000}` + "\n"
		promotionB = `{"v":1,"kind":"promotion","broker":"b","object":"stream/t/nemesis/s","shard":0,"gen":2,"t":4900000000}` + "\n"
		ackB2      = `{"v":1,"kind":"ack","broker":"b","object":"stream/t/nemesis/s","shard":0,"gen":2,"first":9,"last":9,"t":6000000000,"until":6500000000,"lease":1000000000}` + "\n"
	)
	for _, c := range []struct {
		name     string
		lastAckA int64 // the time of a's last ack at generation 1
		want     []check.Kind
	}{
		{"a stopped before the promotion began", 4_800_000_000, nil},
		{"a acknowledged after the promotion began", 4_950_000_000, []check.Kind{check.AckAfterPromotion}},
	} {
		t.Run(c.name, func(t *testing.T) {
			j := newAckJournals(t)
			fileA, fileB := j.prefix+".a.100.jsonl", j.prefix+".b.200.jsonl"
			writeJournal(t, fileA, fmt.Sprintf(ackA1, 0, 4, 4_500_000_000))
			partial := fmt.Sprintf(ackA1, 5, 8, c.lastAckA)
			writeJournal(t, fileA, partial[:30]) // being written when the round's check reads
			writeJournal(t, fileB, promotionB)
			var rec check.Recorder
			if acks, promotions, err := j.feed(&rec, false); err != nil || acks != 1 || promotions != 1 {
				t.Fatalf("the round's feed: %d acks, %d promotions, %v; want 1 and 1", acks, promotions, err)
			}
			writeJournal(t, fileA, partial[30:])
			writeJournal(t, fileB, ackB2+ackB2[:40]) // b killed mid-line
			acks, promotions, err := j.feed(&rec, true)
			if err != nil || acks != 2 || promotions != 0 || j.torn != 1 {
				t.Fatalf("the end's feed: %d acks, %d promotions, %d torn, %v; want 2, 0 and 1 torn", acks, promotions, j.torn, err)
			}
			if missed := j.unjournaled("stream/t/nemesis/s", 0, []int64{0, 4, 5, 8, 9, 10}); !slices.Equal(missed, []int64{10}) {
				t.Fatalf("offsets no journaled ack covers: %v, want [10]", missed)
			}
			r := check.Check(rec.History(), check.Options{})
			if r.Stats.Acks != 3 || r.Stats.Promotions != 1 {
				t.Fatalf("checked %+v, want 3 acks and 1 promotion", r.Stats)
			}
			for _, k := range check.Kinds() {
				if (r.Count(k) > 0) != slices.Contains(c.want, k) {
					t.Fatalf("the checker found %s, want %v:\n%s", r.Summary(), c.want, &r)
				}
			}
		})
	}
}

// writeJournal appends s to a journal file, as a broker does.
func writeJournal(t *testing.T, name, s string) {
	t.Helper()
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// checkJournaled fails the test unless every publish to shard 0 of s a
// client saw acknowledged is covered by an ack a broker journaled: what
// the journals miss, the checker cannot judge.
func (c *nemesisCluster) checkJournaled(h *history, s client.Stream) {
	c.t.Helper()
	var offsets []int64
	for _, a := range h.snapshot() {
		if a.err == nil {
			offsets = append(offsets, a.pos.Offset)
		}
	}
	object := cluster.ObjectID{Kind: cluster.KindStream, Tenant: s.Tenant, Namespace: s.Namespace, Name: s.Name}.String()
	if missed := c.journals.unjournaled(object, 0, offsets); len(missed) > 0 {
		c.t.Fatalf("%d of the %d publishes acknowledged to a client are in no broker's ack journal, at offsets %v (at most 20 shown)",
			len(missed), len(offsets), missed[:min(len(missed), 20)])
	}
}
