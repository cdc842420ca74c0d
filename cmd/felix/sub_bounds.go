package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/units"
)

// start is where felix sub starts each shard: --since (a time, found by
// the broker in each shard's index) or --from.
func (c *subCmd) start(now time.Time) (client.Start, error) {
	if c.Since == "" {
		return parseStart(c.From)
	}
	if c.From != "latest" {
		return client.Start{}, fmt.Errorf("--since and --from exclude each other: --since starts at a time, --from at an offset")
	}
	at, err := parseSince(c.Since, now)
	if err != nil {
		return client.Start{}, err
	}
	return client.FromTime(at), nil
}

// parseSince reads --since: a duration before now (10m, 36h, 7d) or an
// RFC 3339 time.
func parseSince(s string, now time.Time) (time.Time, error) {
	if at, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return at, nil
	}
	d, err := units.ParseDuration(s)
	if err != nil || d < 0 {
		return time.Time{}, fmt.Errorf("--since %q: a duration ago (10m, 36h, 7d) or an RFC 3339 time (2026-12-01T15:04:05Z)", s)
	}
	return now.Add(-d), nil
}

// boundsUnserved says what to do when the broker predates --since and
// --until-end: the client does not ask it (it would ignore the end and
// felix sub would never exit).
func boundsUnserved(err error) error {
	if errors.Is(err, client.ErrFeatureNotNegotiated) {
		return fmt.Errorf("the broker does not serve --since or --until-end (it lacks the subscribe_bounds feature: "+
			"a release older than this felix); upgrade the broker, or subscribe with --from: %w", err)
	}
	return err
}
