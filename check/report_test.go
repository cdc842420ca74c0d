package check

import (
	"strings"
	"testing"
)

// The summary is one line saying valid or not, with the count of every
// kind found and what was checked; the report lists a bounded number of
// examples of each kind with the operations involved.
func TestTheReportSaysWhatItFoundOnOneLineThenShowsExamples(t *testing.T) {
	var s script
	s.publish(1, "a", 0)
	for i := range examplesMax + 2 {
		s.fail(1, Publish{Shard: shardA, Value: string(rune('b' + i))})
		s.read(2, "r", false, i+1, string(rune('b'+i)))
	}
	r := Check(s.history(), Options{})
	sum := r.Summary()
	if strings.Contains(sum, "\n") || !strings.HasPrefix(sum, "INVALID: lost-write 1, aborted-read 5, poll-skip 1 over 11 ops (6 publishes, 1 acknowledged; 5 reads of 5 records)") {
		t.Fatalf("summary %q", sum)
	}
	if n := len(r.Examples[AbortedRead]); n != examplesMax {
		t.Fatalf("%d examples of aborted-read kept, want %d", n, examplesMax)
	}
	full := r.String()
	for _, want := range []string{`aborted-read: shard t/ns/s/0: "b" read, its publish definitely failed`,
		`op 1 p1 publish t/ns/s/0 "b" -> fail (refused) [t 3..4]`, `op 2 p2 read t/ns/s/0 sub "r" from 0 -> ok 1 records 1:"b" [t 5..6]`} {
		if !strings.Contains(full, want) {
			t.Fatalf("report lacks %q:\n%s", want, full)
		}
	}
	var clean script
	clean.publish(1, "a", 0)
	if r := Check(clean.history(), Options{}); !strings.HasPrefix(r.Summary(), "valid: 1 ops") {
		t.Fatalf("summary %q", r.Summary())
	}
}
