package wire

import (
	"math/bits"
	"strings"
	"testing"
)

// TestFeaturesAllNamesEveryDefinedBit: every bit up to the highest
// FeaturesAll holds is defined, named, and not reserved, so a new bit
// cannot be left out of the handshake's intersection.
func TestFeaturesAllNamesEveryDefinedBit(t *testing.T) {
	if FeaturesAll&FeaturesReserved != 0 || FeaturesAll|FeaturesReserved != ^Features(0) {
		t.Fatalf("FeaturesAll %#x and FeaturesReserved %#x must partition the bits", uint64(FeaturesAll), uint64(FeaturesReserved))
	}
	top := 64 - bits.LeadingZeros64(uint64(FeaturesAll))
	if FeaturesAll != Features(1)<<top-1 {
		t.Fatalf("FeaturesAll %#x has holes", uint64(FeaturesAll))
	}
	if len(featureNames) != top {
		t.Fatalf("%d feature names for %d bits", len(featureNames), top)
	}
	if !FeaturesAll.Has(FeatureControlEvents) || FeatureControlEvents != 0x2000 {
		t.Fatalf("FeatureControlEvents %#x not in FeaturesAll", uint64(FeatureControlEvents))
	}
	if s := FeatureControlEvents.String(); s != "control_events" {
		t.Fatalf("String = %q", s)
	}
	if strings.Contains(FeaturesAll.String(), "bit") {
		t.Fatalf("an unnamed bit in %s", FeaturesAll)
	}
}

// TestAControlEventDecodesWithItsFlag: a control event travels in the
// batch like a record, its flag and its offset intact, with no key and
// no value, so a subscriber steps over it without counting a drop.
func TestAControlEventDecodesWithItsFlag(t *testing.T) {
	var b EventBatch
	if err := b.Decode(mustFrame(t, AppendEventBatch(nil, 0, 9, 2, gControlEvents)), Limits{}); err != nil {
		t.Fatal(err)
	}
	it := b.Events()
	if !it.Next() {
		t.Fatal("no event")
	}
	ev := it.Event()
	if ev.Offset != 0 || ev.Flags&EventFlagControl == 0 || len(ev.Key) != 0 || len(ev.Value) != 0 {
		t.Fatalf("control event = %+v", ev)
	}
	if !it.Next() || it.Event().Offset != 1 || it.Event().Flags&EventFlagControl != 0 {
		t.Fatalf("record after it = %+v", it.Event())
	}
}
