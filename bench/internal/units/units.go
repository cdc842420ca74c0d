package units

import (
	"math"
	"strconv"
	"time"
)

// Duration formats d with three significant digits: "850ns", "12.3us",
// "1.23ms", "4.56s". Zero prints "0".
func Duration(d time.Duration) string {
	switch {
	case d == 0:
		return "0"
	case d < 0:
		return "-" + Duration(-d)
	}
	// Round first, so 999.5us prints as "1.00ms" rather than "1000us".
	d = time.Duration(round3(float64(d)))
	switch {
	case d < time.Microsecond:
		return strconv.FormatInt(int64(d), 10) + "ns"
	case d < time.Millisecond:
		return sig3(float64(d)/1e3) + "us"
	case d < time.Second:
		return sig3(float64(d)/1e6) + "ms"
	}
	return sig3(float64(d)/1e9) + "s"
}

// Count formats n with three significant digits and an SI suffix: "950",
// "12.3k", "1.23M", "4.56G".
func Count(n float64) string {
	switch a := math.Abs(round3(n)); {
	case a < 1e3:
		return sig3(n)
	case a < 1e6:
		return sig3(n/1e3) + "k"
	case a < 1e9:
		return sig3(n/1e6) + "M"
	}
	return sig3(n/1e9) + "G"
}

// MBPerSec formats a rate in MB/s (10^6 bytes per second) without its unit.
func MBPerSec(mb float64) string {
	return sig3(mb)
}

// Ratio formats a figure divided by its baseline: "0.853x", "1.20x".
func Ratio(r float64) string {
	return sig3(r) + "x"
}

// sig3 prints v with three significant digits, never in exponent form, and
// without a fraction when v is 100 or more.
func sig3(v float64) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	digits := 2 - int(math.Floor(math.Log10(math.Abs(v))))
	if digits < 0 {
		digits = 0
	}
	s := strconv.FormatFloat(v, 'f', digits, 64)
	if rounded, _ := strconv.ParseFloat(s, 64); digits > 0 && math.Abs(rounded) >= math.Pow10(3-digits) {
		// 9.995 rounds to "10.00": one digit too many.
		s = strconv.FormatFloat(v, 'f', digits-1, 64)
	}
	return s
}

// round3 rounds v to three significant digits.
func round3(v float64) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	scale := math.Pow10(2 - int(math.Floor(math.Log10(math.Abs(v)))))
	return math.Round(v*scale) / scale
}

// Bytes formats a size in binary units: "512B", "4.00KiB", "1.50GiB".
func Bytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatUint(n, 10) + "B"
	}
	v, suffix := float64(n)/unit, "KiB"
	for _, s := range []string{"MiB", "GiB", "TiB", "PiB"} {
		if round3(v) < unit {
			break
		}
		v, suffix = v/unit, s
	}
	return sig3(v) + suffix
}
