// Package units parses the sizes and durations a person writes on a
// command line or in a config file: "64MiB", "1GiB", "4k", "7d", "1d12h",
// "-1s". Every felix command and setting reads them through it, so one
// form works everywhere.
//
// It never guesses: a size is a whole number of bytes with an optional
// binary (KiB, MiB, GiB, TiB; k, m, g, t) or decimal (KB, MB, GB, TB)
// suffix, case-insensitive; a duration is what time.ParseDuration takes,
// plus days ("d", 24 hours) as the leading unit. Anything else is an error
// that shows the forms it takes.
package units

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// byteSuffixes, longest first so "kib" is not read as "b".
var byteSuffixes = []struct {
	suffix string
	mult   int64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40},
	{"b", 1},
}

// ParseBytes reads a byte count: "4096", "64KiB", "1GiB", "4k", "1MB".
func ParseBytes(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range byteSuffixes {
		if rest, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("size %q: write a whole number of bytes, optionally with a unit: 4096, 64KiB, 1GiB, 4k, 1MB", s)
	}
	return n * mult, nil
}

var errDuration = errors.New("write a duration: 30s, 10m, 36h, 7d, 1d12h (0 for none)")

// ParseDuration reads a duration as time.ParseDuration does, with days:
// "7d", "1.5d", "1d12h"; "0" is zero.
func ParseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if t == "0" {
		return 0, nil
	}
	sign := time.Duration(1)
	if rest, ok := strings.CutPrefix(t, "-"); ok {
		sign, t = -1, rest
	}
	var days time.Duration
	if i := strings.IndexByte(t, 'd'); i > 0 {
		n, err := strconv.ParseFloat(t[:i], 64)
		if err != nil || n < 0 || n > float64(math.MaxInt64)/float64(24*time.Hour) {
			return 0, fmt.Errorf("duration %q: %w", s, errDuration)
		}
		days, t = time.Duration(n*float64(24*time.Hour)), t[i+1:]
		if t == "" {
			return sign * days, nil
		}
	}
	d, err := time.ParseDuration(t)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("duration %q: %w", s, errDuration)
	}
	return sign * (days + d), nil
}

// Bytes is a size flag or setting: ParseBytes as its text.
type Bytes int64

// UnmarshalText implements encoding.TextUnmarshaler.
func (b *Bytes) UnmarshalText(text []byte) error {
	n, err := ParseBytes(string(text))
	*b = Bytes(n)
	return err
}

// Duration is a duration flag or setting: ParseDuration as its text.
type Duration time.Duration

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(text []byte) error {
	v, err := ParseDuration(string(text))
	*d = Duration(v)
	return err
}

// String is the duration as time.Duration writes it.
func (d Duration) String() string { return time.Duration(d).String() }
