package cluster_test

import (
	"fmt"
	"strings"

	"github.com/felixbroker/felix/cluster"
)

func printStatus(st cluster.Status) string {
	var b strings.Builder
	fmt.Fprintf(&b, "epoch=%d synced=%t\n", st.Epoch, st.Synced)
	for _, bs := range st.Brokers {
		fmt.Fprintf(&b, "broker %s disk=%s rack=%s leaders=%d replicas=%d\n",
			bs.Broker.ID, bs.Broker.DiskID, orDash(bs.Broker.Rack), bs.Leaders, bs.Replicas)
	}
	for _, ss := range st.Shards {
		fmt.Fprintf(&b, "shard %v %v rev=%d stored=%t leader-live=%t live=%d/%d\n", ss.Shard, ss.Assignment,
			ss.Revision, ss.Stored, ss.LeaderLive, ss.Live, len(ss.Assignment.Replicas))
	}
	for _, u := range st.Unplaced {
		fmt.Fprintf(&b, "unplaced %v needs=%d live=%d\n", u.Object, u.Needed, u.Live)
	}
	return b.String()
}

// printLoad is the leader and replica counts of the live brokers.
func printLoad(st cluster.Status) string {
	var leaders, replicas []string
	for _, bs := range st.Brokers {
		leaders = append(leaders, fmt.Sprintf("%s=%d", bs.Broker.ID, bs.Leaders))
		replicas = append(replicas, fmt.Sprintf("%s=%d", bs.Broker.ID, bs.Replicas))
	}
	return "leaders " + strings.Join(leaders, " ") + "\nreplicas " + strings.Join(replicas, " ") + "\n"
}

// printRacks is, per decided shard, the racks of its replicas' brokers as
// they last registered.
func printRacks(d *driver) string {
	var b strings.Builder
	for _, ss := range d.m.Status().Shards {
		var racks []string
		for _, r := range ss.Assignment.Replicas {
			racks = append(racks, orDash(d.racks[r.Broker]))
		}
		fmt.Fprintf(&b, "%v %s\n", ss.Shard, strings.Join(racks, " "))
	}
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
