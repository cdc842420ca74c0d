package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/felixbroker/felix/broker"
)

// printClusterStatus writes st for a person: a header line, then the
// brokers, then every shard with its leader and replicas, then what is
// not placed and why.
func printClusterStatus(w io.Writer, st broker.ClusterStatusJSON) error {
	fmt.Fprintln(w, clusterHeader(st))
	if !st.Ready {
		fmt.Fprintf(w, "%s is not ready: %s\n", st.Broker, st.NotReady)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tCLIENT\tPEER\tRACK\tLIVE")
	for _, b := range st.Brokers {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", b.ID, orDash(b.ClientAddr), orDash(b.PeerAddr), orDash(b.Rack), liveWord(b.Live))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if len(st.Objects) == 0 {
		fmt.Fprintln(w, "no streams or caches")
		return nil
	}
	if err := printShards(w, st.Objects); err != nil {
		return err
	}
	printNotPlaced(w, st.Objects)
	return nil
}

// clusterHeader is "cluster of N brokers, control plane on X (epoch E);
// seen by B at revision R". N counts the live brokers; those that
// replicas name and that are gone are said apart.
func clusterHeader(st broker.ClusterStatusJSON) string {
	live := 0
	for _, b := range st.Brokers {
		if b.Live {
			live++
		}
	}
	s := "cluster of " + pluralOf(live, "broker")
	if gone := len(st.Brokers) - live; gone > 0 {
		s += fmt.Sprintf(" (%d more named by replicas, not live)", gone)
	}
	if st.ControlPlane != nil {
		s += fmt.Sprintf(", control plane on %s (epoch %d)", st.ControlPlane.Broker, st.ControlPlane.Epoch)
	} else {
		s += ", no control plane leads"
	}
	return s + fmt.Sprintf("; seen by %s at revision %d", st.Broker, st.Revision)
}

// printShards writes the shards table: one row per shard placed.
func printShards(w io.Writer, objects []broker.ClusterObjectJSON) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "OBJECT\tSHARD\tLEADER\tREPLICAS\tGENERATION")
	for _, o := range objects {
		for _, s := range o.Shards {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%d\n", objectName(o), s.Shard, leaderOf(s), replicasOf(s), s.Generation)
		}
	}
	return tw.Flush()
}

// printNotPlaced says, below the table, which objects have no shards in
// it yet and why.
func printNotPlaced(w io.Writer, objects []broker.ClusterObjectJSON) {
	var lines []string
	for _, o := range objects {
		switch {
		case o.State == broker.ObjectUnplaced && o.Unplaced != nil:
			lines = append(lines, fmt.Sprintf("not placed: %s: its replication factor needs %s, %d live",
				objectName(o), pluralOf(o.Unplaced.Needed, "broker"), o.Unplaced.Live))
		case o.State == broker.ObjectPlacing:
			lines = append(lines, fmt.Sprintf("not placed yet: %s (%d of %d shards assigned): the control plane has yet to decide",
				objectName(o), len(o.Shards), o.ShardCount))
		}
	}
	if len(lines) > 0 {
		fmt.Fprintf(w, "\n%s\n", strings.Join(lines, "\n"))
	}
}

// objectName is kind/tenant/namespace/name, as the cluster's logs write it.
func objectName(o broker.ClusterObjectJSON) string {
	return o.Kind + "/" + o.Tenant + "/" + o.Namespace + "/" + o.Name
}

// leaderOf is "id addr", "id (not live)", or "none".
func leaderOf(s broker.ClusterShardJSON) string {
	switch {
	case s.Leader == nil:
		return "none"
	case !s.LeaderLive:
		return s.Leader.Broker + " (not live)"
	}
	return s.Leader.Broker + " " + s.Leader.ClientAddr
}

// replicasOf is "a,b", each replica not live marked "(not live)", one
// that took a gone replica's place "(joined at G)".
func replicasOf(s broker.ClusterShardJSON) string {
	names := make([]string, len(s.Replicas))
	for i, r := range s.Replicas {
		names[i] = r.Broker
		if r.JoinedAt != 0 {
			names[i] += fmt.Sprintf(" (joined at %d)", r.JoinedAt)
		}
		if !r.Live {
			names[i] += " (not live)"
		}
	}
	return strings.Join(names, ",")
}

func liveWord(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// pluralOf is "1 broker", "2 brokers".
func pluralOf(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
