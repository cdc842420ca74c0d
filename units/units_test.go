package units

import (
	"testing"
	"time"
)

func TestSizesParseInEveryUnit(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "4096": 4096, "64KiB": 64 << 10, "64kib": 64 << 10, "1MiB": 1 << 20, "2GiB": 2 << 30, "1TiB": 1 << 40,
		"4k": 4 << 10, "1m": 1 << 20, "3g": 3 << 30, "1KB": 1000, "5MB": 5e6, "1GB": 1e9, "512B": 512, " 8 KiB ": 8 << 10,
	} {
		if got, err := ParseBytes(in); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "1.5GiB", "KiB", "1 MiB extra", "9999999999TiB", "1PiB"} {
		if _, err := ParseBytes(in); err == nil {
			t.Errorf("ParseBytes(%q) took it", in)
		}
	}
}

func TestDurationsParseWithDays(t *testing.T) {
	day := 24 * time.Hour
	for in, want := range map[string]time.Duration{
		"0": 0, "0s": 0, "30s": 30 * time.Second, "36h": 36 * time.Hour, "7d": 7 * day, "1.5d": 36 * time.Hour,
		"1d12h": 36 * time.Hour, "2d30m": 2*day + 30*time.Minute, "-1s": -time.Second, "10ms": 10 * time.Millisecond,
	} {
		if got, err := ParseDuration(in); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "7", "d", "7x", "1d-2h", "tomorrow", "1dd"} {
		if _, err := ParseDuration(in); err == nil {
			t.Errorf("ParseDuration(%q) took it", in)
		}
	}
}

func TestTheFlagTypesReadTheSameForms(t *testing.T) {
	var b Bytes
	var d Duration
	if err := b.UnmarshalText([]byte("64MiB")); err != nil || b != 64<<20 {
		t.Fatalf("Bytes: %d %v", b, err)
	}
	if err := d.UnmarshalText([]byte("7d")); err != nil || time.Duration(d) != 7*24*time.Hour || d.String() != "168h0m0s" {
		t.Fatalf("Duration: %v %v", d, err)
	}
}
