//go:build linux || darwin

package broker

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/control"
	"github.com/felixbroker/felix/cluster/replica"
	"github.com/felixbroker/felix/netio/wire"
	"golang.org/x/sys/unix"
)

// What a broker journals is read back as written: each acknowledgement
// with its log, generation, offsets and lease window, each promotion's
// start with its shard and generation, the times on CLOCK_MONOTONIC.
func TestTheAckJournalIsReadBackAsWritten(t *testing.T) {
	prefix := t.TempDir() + "/acks"
	j, err := openAckJournal(prefix, "b1")
	if err != nil {
		t.Fatal(err)
	}
	var ts unix.Timespec
	now := time.Now()
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		t.Fatal(err)
	}
	shard := cluster.ShardID{Object: cluster.ObjectID{Kind: cluster.KindStream, Tenant: "t", Namespace: "ns", Name: "s"}, Shard: 2}
	j.onAck()(replica.AckReport{Ref: replica.RefOfPart(shard, "groups"), Generation: 3, First: 10, Last: 12,
		At: now, Until: now.Add(750 * time.Millisecond), Lease: time.Second})
	j.onPromotion()(control.PromotionReport{Shard: shard, Generation: 4, Sent: now.Add(2 * time.Second)})
	if err := j.close(); err != nil {
		t.Fatal(err)
	}
	j.ack(replica.AckReport{Ref: wire.LogRef{Name: []byte("after")}}) // closed: dropped
	f, err := os.Open(ackJournalPath(prefix, "b1", os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, torn, err := ReadAckJournal(f)
	if err != nil || torn != 0 || len(got) != 2 {
		t.Fatalf("read %+v, %d torn: %v; want the 2 entries", got, torn, err)
	}
	at := got[0].Time
	if d := at - ts.Nano(); d < -int64(time.Millisecond) || d > int64(time.Millisecond) {
		t.Fatalf("the ack's time %d is %v off CLOCK_MONOTONIC's reading beside it, %d", at, time.Duration(d), ts.Nano())
	}
	want := []JournalEntry{
		{Version: 1, Kind: JournalAck, Broker: "b1", Object: "stream/t/ns/s", Shard: 2, Part: "groups", Generation: 3, First: 10, Last: 12,
			Time: at, Until: at + int64(750*time.Millisecond), Lease: int64(time.Second)},
		{Version: 1, Kind: JournalPromotion, Broker: "b1", Object: "stream/t/ns/s", Shard: 2, Generation: 4, Time: at + int64(2*time.Second)},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("read\n%+v\nwant\n%+v", got, want)
	}
}

// A last line cut short (the process killed mid-write) is left out and
// counted; a damaged line before it, or one of another version or kind,
// is an error.
func TestAnAckJournalsTornLastLineIsLeftOut(t *testing.T) {
	good := string(JournalEntry{Kind: JournalPromotion, Broker: "a", Object: "stream/t/ns/s", Generation: 2, Time: 5}.append(nil))
	got, torn, err := ReadAckJournal(strings.NewReader(good + good[:20]))
	if err != nil || torn != 1 || len(got) != 1 || got[0].Generation != 2 {
		t.Fatalf("%+v, %d torn, %v; want the whole line and one torn", got, torn, err)
	}
	for _, bad := range []string{good[:20] + "\n" + good, `{"v":2,"kind":"ack"}` + "\n", `{"v":1,"kind":"nack"}` + "\n",
		`{"v":1,"kind":"ack","extra":1}` + "\n"} {
		if _, _, err := ReadAckJournal(strings.NewReader(bad)); err == nil {
			t.Fatalf("%q read without an error", bad)
		}
	}
}

// Without AckJournal a broker's replica node and control plane get no
// hooks at all (nil: nothing called on the ack path).
func TestNoAckJournalMeansNoHooks(t *testing.T) {
	var j *ackJournal
	if j.onAck() != nil || j.onPromotion() != nil || j.close() != nil {
		t.Fatal("a nil journal handed out a hook, or failed to close")
	}
}
