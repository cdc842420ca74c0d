package group

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/shardlog"
)

// The checker: consumers poll, ack, nack, reject and extend at random while
// the clock moves (claims lapse), records are published, retention runs and
// the broker restarts, cleanly or by crashing. Each seed is replayable.
// Throughout, no record is handed to a consumer while another's claim on
// it stands, and none acked is handed out again before a restart; at the
// end every record is acked, dead-lettered, or was removed by retention
// and counted as skipped.
func TestCheckerEveryRecordEndsAckedDeadOrSkipped(t *testing.T) {
	for seed := range uint64(16) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) { runChecker(t, seed) })
	}
}

const (
	checkRecords    = 600
	checkSteps      = 1500
	checkVisibility = 10 * time.Second
	checkMaxDeliver = 3
)

type claimModel struct {
	consumer string
	until    time.Time
}

type checker struct {
	t         *testing.T
	f         *fixture
	rng       *rand.Rand
	consumers []string
	holder    map[int64]claimModel // who the checker knows holds each record
	ackedNow  map[int64]bool       // acked since the last restart
	everAcked map[int64]bool
	skips     uint64 // retention skips of earlier incarnations
	history   map[int64][]string
	// maxStart is the highest start the shard has had: a crash can bring
	// back segments retention removed (their removal was not yet durable),
	// so the start can move back.
	maxStart  int64
	published int64
}

func runChecker(t *testing.T, seed uint64) {
	c := &checker{
		t: t, rng: rand.New(rand.NewPCG(seed, 7)), consumers: []string{"c0", "c1", "c2", "c3"},
		holder: map[int64]claimModel{}, history: map[int64][]string{}, ackedNow: map[int64]bool{}, everAcked: map[int64]bool{},
	}
	c.f = newFixtureWith(t, Options{Visibility: checkVisibility, MaxDeliveries: checkMaxDeliver, WindowRecords: 48, CompactRecords: 64, LogSegmentBytes: 4 << 10},
		engine.StreamConfig{Durable: true, Retention: shardlog.Retention{MaxBytes: 16 << 10}})
	if err := c.f.m.Create(key("g"), engine.StartEarliest, 0); err != nil {
		t.Fatal(err)
	}
	for range checkSteps {
		c.step()
		c.maxStart = max(c.maxStart, c.start())
	}
	c.drain()
	c.verify()
}

func (c *checker) step() {
	switch r := c.rng.IntN(1000); {
	case r < 100:
		if n := min(int64(1+c.rng.IntN(30)), checkRecords-c.published); n > 0 {
			c.f.publish(int(n))
			c.published += n
		}
	case r < 450:
		c.poll(c.pick(), 1+c.rng.IntN(10))
	case r < 650:
		c.settle("ack")
	case r < 750:
		c.settle("nack")
	case r < 780:
		c.settle("reject")
	case r < 810:
		c.extend()
	case r < 930:
		c.f.clock.advance(time.Duration(1+c.rng.IntN(7)) * time.Second)
	case r < 950:
		sh, _ := c.f.stream.Shard(0)
		sh.ApplyRetention()
	case r < 980:
		c.f.clock.advance(time.Duration(1+c.rng.IntN(7)) * time.Second)
	case r < 995:
		c.restart(false)
	default:
		c.restart(true)
	}
}

func (c *checker) start() int64 {
	sh, _ := c.f.stream.Shard(0)
	return sh.Start()
}

func (c *checker) pick() string { return c.consumers[c.rng.IntN(len(c.consumers))] }

// poll checks each delivery against the claims the checker knows.
func (c *checker) poll(who string, max int) []Delivery {
	ds := c.f.poll("g", who, max)
	now := c.f.clock.Now()
	for _, d := range ds {
		o := d.Offset
		if h, ok := c.holder[o]; ok && h.consumer != who && h.until.After(now) {
			c.t.Fatalf("record %d handed to %s while %s's claim stands until %v (now %v)", o, who, h.consumer, h.until, now)
		}
		if c.ackedNow[o] {
			c.t.Fatalf("record %d handed to %s after it was acked", o, who)
		}
		if string(d.Value) != fmt.Sprint("v", o) || !d.ClaimedUntil.Equal(now.Add(checkVisibility)) {
			c.t.Fatalf("delivery %+v at %v", d, now)
		}
		c.holder[o] = claimModel{consumer: who, until: d.ClaimedUntil}
		c.note(o, "to %s #%d", who, d.Deliveries)
	}
	return ds
}

// held picks some of the records a consumer holds, as the checker knows.
func (c *checker) held(who string) []int64 {
	var out []int64
	for o, h := range c.holder {
		if h.consumer == who && c.rng.IntN(2) == 0 {
			out = append(out, o)
		}
	}
	return sorted(out)
}

// settle acks, nacks or rejects some held records. A standing claim must
// be honoured; one that lapsed may be refused (it may be owed, taken, or
// being dead-lettered).
func (c *checker) settle(how string) {
	who := c.pick()
	offsets := c.held(who)
	if len(offsets) == 0 {
		return
	}
	var err error
	switch how {
	case "ack":
		err = c.f.m.Ack(key("g"), who, offsets)
	case "nack":
		err = c.f.m.Nack(key("g"), who, offsets, time.Duration(c.rng.IntN(3))*4*time.Second)
	default:
		err = c.f.m.Reject(key("g"), who, offsets[:1], "checker")
		offsets = offsets[:1]
	}
	refused := map[int64]bool{}
	var ce *ClaimError
	if errors.As(err, &ce) {
		for _, o := range ce.Offsets {
			refused[o] = true
		}
	} else if err != nil {
		c.t.Fatal(err)
	}
	now, start := c.f.clock.Now(), c.start()
	for _, o := range offsets {
		if refused[o] && c.holder[o].until.After(now) && o >= start {
			c.t.Fatalf("%s of record %d refused while %s's claim stands", how, o, who)
		}
		c.note(o, "%s by %s refused=%v", how, who, refused[o])
		if !refused[o] && how == "ack" {
			c.ackedNow[o], c.everAcked[o] = true, true
		}
		delete(c.holder, o)
	}
}

// extend must hold a standing claim and refuse a lapsed one.
func (c *checker) extend() {
	who := c.pick()
	offsets := c.held(who)
	if len(offsets) == 0 {
		return
	}
	o, now := offsets[0], c.f.clock.Now()
	err := c.f.m.Extend(key("g"), who, []int64{o}, checkVisibility)
	standing := c.holder[o].until.After(now)
	switch {
	case o < c.start():
		delete(c.holder, o) // retention removed it: the claim ended
	case standing && err != nil:
		c.t.Fatalf("extend of a standing claim on %d: %v", o, err)
	case !standing && !errors.Is(err, ErrNotClaimed):
		c.t.Fatalf("extend of a lapsed claim on %d: %v", o, err)
	case standing:
		c.holder[o] = claimModel{consumer: who, until: now.Add(checkVisibility)}
	}
}

func (c *checker) restart(crash bool) {
	c.skips += c.f.describe("g").RetentionSkips
	if crash {
		c.f.crash()
	} else {
		c.f.restart()
	}
	clear(c.holder)
	clear(c.ackedNow)
	for o := range c.published {
		c.note(o, "restart crash=%v cursor=%d", crash, c.f.describe("g").Cursor)
		break
	}
}

// drain publishes what is left and finishes everything: one consumer
// takes and acks until the group is at the shard's end with nothing owed.
func (c *checker) drain() {
	if n := checkRecords - c.published; n > 0 {
		c.f.publish(int(n))
		c.published += n
	}
	for range 1000 {
		c.f.clock.advance(2 * checkVisibility)
		ds := c.poll("drain", 100)
		if len(ds) > 0 {
			c.f.ack("g", "drain", offsets(ds)...)
			for _, d := range ds {
				c.ackedNow[d.Offset], c.everAcked[d.Offset] = true, true
				delete(c.holder, d.Offset)
			}
			continue
		}
		c.f.settled("g")
		if d := c.f.describe("g"); d.Cursor == d.End && d.Owed == 0 && d.InFlight == 0 {
			return
		}
	}
	c.t.Fatalf("the group never drained: %+v", c.f.describe("g"))
}

// verify: every record is acked, dead, or gone by retention and counted.
func (c *checker) verify() {
	dead, err := c.f.m.DeadLetters(key("g"), 0, PollRecordsMax)
	if err != nil {
		c.t.Fatal(err)
	}
	isDead := map[int64]bool{}
	for _, d := range dead {
		isDead[d.Offset] = true
		if d.Reason != ReasonRejected && d.Deliveries < checkMaxDeliver {
			c.t.Fatalf("dead letter after %d deliveries: %+v", d.Deliveries, d)
		}
	}
	skips := c.skips + c.f.describe("g").RetentionSkips
	missing := uint64(0)
	for o := range c.published {
		if c.everAcked[o] || isDead[o] {
			continue
		}
		if o >= c.maxStart {
			c.t.Fatalf("record %d is neither acked nor dead, and retention kept it: %q", o, c.history[o])
		}
		missing++
	}
	if missing > skips {
		c.t.Fatalf("%d records unfinished, %d counted as skipped", missing, skips)
	}
	c.t.Logf("%d records: %d dead, %d skipped by retention (%d never finished), start %d",
		c.published, len(dead), skips, missing, c.maxStart)
}

func (c *checker) note(o int64, format string, args ...any) {
	c.history[o] = append(c.history[o], fmt.Sprintf("%v: ", c.f.clock.Now().Unix()%10000)+fmt.Sprintf(format, args...))
}
