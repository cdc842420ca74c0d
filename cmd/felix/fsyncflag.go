package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/engine/shardlog"
)

// fsyncFlag is a stream's or a cache's --fsync, written as felix serve's
// --fsync is: none, periodic[:interval], on_commit; empty is the broker's
// default. A periodic interval may also come apart, in --fsync-interval (0:
// the broker's); one written in --fsync wins.
func fsyncFlag(s string, interval time.Duration) (client.Fsync, error) {
	if strings.TrimSpace(s) == "" {
		return client.Fsync{}, nil
	}
	mode, err := shardlog.ParseFsyncMode(s)
	if err != nil {
		return client.Fsync{}, fmt.Errorf("--fsync %q: none, periodic, periodic:10ms, on_commit", s)
	}
	switch mode.Kind {
	case shardlog.FsyncNone:
		return client.Fsync{Kind: client.FsyncNone}, nil
	case shardlog.FsyncOnCommit:
		return client.Fsync{Kind: client.FsyncOnCommit}, nil
	}
	if !strings.Contains(s, ":") {
		mode.Interval = interval
	}
	return client.Fsync{Kind: client.FsyncPeriodic, Interval: mode.Interval}, nil
}
