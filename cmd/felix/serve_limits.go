package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/felixbroker/felix/netio"
	"github.com/felixbroker/felix/units"
)

// netLimits are the bounds on what clients can make the broker hold:
// --frame-timeout, --max-connections, --max-inbound-bytes
// (docs/operations.md, "What a client can make the broker hold").
type netLimits struct {
	frameTimeout                    time.Duration
	maxConnections, maxInboundBytes int
}

func parseNetLimits(st *settings) (netLimits, error) {
	var l netLimits
	var errs []error
	var err error
	l.frameTimeout, err = units.ParseDuration(st.get("frame-timeout"))
	if err == nil && l.frameTimeout == 0 {
		err = errors.New("must be more than 0, or negative for never")
	}
	errs = append(errs, named("frame-timeout", err))
	l.maxConnections, err = positive(st.get("max-connections"))
	errs = append(errs, named("max-connections", err))
	l.maxInboundBytes, err = intBytes(st.get("max-inbound-bytes"))
	if err == nil && l.maxInboundBytes <= 0 {
		err = errors.New("must be more than 0")
	}
	errs = append(errs, named("max-inbound-bytes", err))
	return l, errors.Join(errs...)
}

func (l netLimits) configure(c *netio.Config) {
	c.FrameTimeout, c.ConnectionsMax, c.InboundBytesMax = l.frameTimeout, l.maxConnections, l.maxInboundBytes
}

func positive(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err == nil && n <= 0 {
		err = errors.New("must be more than 0")
	}
	return n, err
}

// intBytes is a size setting held in an int.
func intBytes(s string) (int, error) {
	n, err := units.ParseBytes(s)
	if err == nil && n > math.MaxInt32 {
		err = fmt.Errorf("%s is more than %d bytes", s, math.MaxInt32)
	}
	return int(n), err
}

func named(key string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("--%s: %w", key, err)
}
