package main

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/felixbroker/felix/netio"
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
	l.frameTimeout, err = time.ParseDuration(st.get("frame-timeout"))
	if err == nil && l.frameTimeout == 0 {
		err = errors.New("must be more than 0, or negative for never")
	}
	errs = append(errs, named("frame-timeout", err))
	l.maxConnections, err = positive(st.get("max-connections"))
	errs = append(errs, named("max-connections", err))
	l.maxInboundBytes, err = positive(st.get("max-inbound-bytes"))
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

func named(key string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("--%s: %w", key, err)
}
