package check

import (
	"strings"
	"testing"
)

// An acknowledgement at generation g at or after the start of a promotion
// of its shard to a generation above g is reported, with its kind and no
// other; acks before it, acks at the promoted generation or above, and
// acks of another shard are not.
func TestAnAckAfterAPromotionBeganIsReported(t *testing.T) {
	shardB := Shard{Stream: "t/ns/s", Index: 1}
	ack := func(s Shard, broker string, gen uint64, at int64) Ack {
		return Ack{Shard: s, Broker: broker, Generation: gen, Time: at, LeaseSent: at - 100, Lease: 1000}
	}
	promoted := func(s Shard, gen uint64, at int64) Promotion { return Promotion{Shard: s, Generation: gen, Time: at} }
	cases := []struct {
		name   string
		acks   []Ack
		promos []Promotion
		want   []Kind
	}{
		{"clean: the old leader stops before, the new one acks after",
			[]Ack{ack(shardA, "b1", 1, 1000), ack(shardA, "b1", 1, 1999), ack(shardA, "b2", 2, 2500), ack(shardB, "b1", 1, 5000)},
			[]Promotion{promoted(shardA, 2, 2000)}, nil},
		{"an ack at the promotion's start", []Ack{ack(shardA, "b1", 1, 2000)},
			[]Promotion{promoted(shardA, 2, 2000)}, []Kind{AckAfterPromotion}},
		{"an ack after it", []Ack{ack(shardA, "b1", 1, 1000), ack(shardA, "b1", 1, 2600)},
			[]Promotion{promoted(shardA, 2, 2000)}, []Kind{AckAfterPromotion}},
		{"a later promotion that began first counts for the generations below it",
			[]Ack{ack(shardA, "b1", 1, 1500)},
			[]Promotion{promoted(shardA, 2, 3000), promoted(shardA, 3, 1400)}, []Kind{AckAfterPromotion}},
		{"a promotion to the ack's own generation or below is not its replacement",
			[]Ack{ack(shardA, "b2", 2, 2500)},
			[]Promotion{promoted(shardA, 1, 100), promoted(shardA, 2, 2000)}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := Check(History{Acks: c.acks, Promotions: c.promos}, Options{})
			requireKinds(t, &r, c.want...)
			if r.Stats.Promotions != len(c.promos) || r.Stats.Acks != len(c.acks) {
				t.Fatalf("stats %+v, want %d acks and %d promotions", r.Stats, len(c.acks), len(c.promos))
			}
		})
	}
}

// The report names the broker, the generations and how long after the
// promotion's start the ack came; the summary counts the promotions.
func TestAnAckAfterAPromotionIsReportedWithItsTimes(t *testing.T) {
	var rec Recorder
	rec.Ack(Ack{Shard: shardA, Broker: "b1", Generation: 4, Offset: 17, Time: 2250, LeaseSent: 2000, Lease: 1000})
	rec.Promotion(Promotion{Shard: shardA, Generation: 5, Time: 2200})
	r := Check(rec.History(), Options{})
	want := "ack-after-promotion: shard t/ns/s/0: b1 acknowledged offset 17 at generation 4 at 2250, 50 after the promotion to generation 5 began at 2200"
	if !strings.Contains(r.String(), want) {
		t.Fatalf("report lacks %q:\n%s", want, &r)
	}
	if sum := r.Summary(); !strings.HasPrefix(sum, "INVALID: ack-after-promotion 1 over 0 ops") || !strings.Contains(sum, "1 broker acks, 0 shard logs, 0 linearizability partitions, 1 promotions") {
		t.Fatalf("summary %q", sum)
	}
}
