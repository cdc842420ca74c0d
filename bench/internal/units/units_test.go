package units

import (
	"testing"
	"time"
)

func TestDuration(t *testing.T) {
	cases := []struct {
		d    time.Duration
		want string
	}{
		{0, "0"},
		{850, "850ns"},
		{1000, "1.00us"},
		{12345, "12.3us"},
		{999_500, "1.00ms"},
		{1_234_567, "1.23ms"},
		{155 * time.Microsecond, "155us"},
		{4560 * time.Millisecond, "4.56s"},
		{60 * time.Second, "60.0s"},
		{-2 * time.Millisecond, "-2.00ms"},
	}
	for _, c := range cases {
		if got := Duration(c.d); got != c.want {
			t.Errorf("Duration(%d) = %q, want %q", int64(c.d), got, c.want)
		}
	}
}

func TestCountAndRatio(t *testing.T) {
	cases := []struct {
		got, want string
	}{
		{Count(0), "0"},
		{Count(950), "950"},
		{Count(9.996), "10.0"},
		{Count(12_345), "12.3k"},
		{Count(216_000), "216k"},
		{Count(1_234_567), "1.23M"},
		{Count(999_600), "1.00M"},
		{Count(4.56e9), "4.56G"},
		{MBPerSec(24.93), "24.9"},
		{MBPerSec(2345.6), "2346"},
		{Ratio(0.8532), "0.853x"},
		{Ratio(1.2), "1.20x"},
		{Bytes(512), "512B"},
		{Bytes(4096), "4.00KiB"},
		{Bytes(1536 << 20), "1.50GiB"},
		{Bytes(1023 << 20), "1023MiB"},
	}
	for i, c := range cases {
		if c.got != c.want {
			t.Errorf("case %d: got %q, want %q", i, c.got, c.want)
		}
	}
}
