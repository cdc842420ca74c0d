package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/felixbroker/felix/broker"
)

// statusCmd answers "is this broker, and its cluster, healthy?" in one
// screen, from the broker's admin server (/cluster): ready or why not,
// the control plane, the brokers live, and the shards without a serving
// leader or short of a replica. It fails (exit 1) when anything is wrong,
// so a script or a probe can run it.
type statusCmd struct {
	adminFlags
}

func (c *statusCmd) Run() error {
	body, err := c.get("/cluster")
	if err != nil {
		return err
	}
	var st broker.ClusterStatusJSON
	if err := json.Unmarshal(body, &st); err != nil || st.Version != broker.ClusterStatusVersion {
		return fmt.Errorf("the admin server at %s answered /cluster with what this felix cannot read (felix cluster status --json prints it)", c.Admin)
	}
	if problems := printStatus(os.Stdout, st); len(problems) > 0 {
		return fmt.Errorf("unhealthy: %s", strings.Join(problems, "; "))
	}
	return nil
}

// printStatus writes the one screen and returns what is wrong.
func printStatus(w io.Writer, st broker.ClusterStatusJSON) (problems []string) {
	if st.Ready {
		fmt.Fprintf(w, "broker %s: ready\n", st.Broker)
	} else {
		fmt.Fprintf(w, "broker %s: NOT READY: %s\n", st.Broker, st.NotReady)
		problems = append(problems, "broker "+st.Broker+" is not ready")
	}
	if cp := st.ControlPlane; cp != nil {
		fmt.Fprintf(w, "control plane: on %s (epoch %d)\n", cp.Broker, cp.Epoch)
	} else {
		fmt.Fprintln(w, "control plane: NONE elected")
		problems = append(problems, "no control plane")
	}
	var live, down []string
	for _, b := range st.Brokers {
		if b.Live {
			live = append(live, b.ID)
		} else {
			down = append(down, b.ID)
		}
	}
	fmt.Fprintf(w, "brokers: %d live (%s)", len(live), strings.Join(live, " "))
	if len(down) > 0 {
		fmt.Fprintf(w, ", %d DOWN (%s)", len(down), strings.Join(down, " "))
		problems = append(problems, fmt.Sprintf("%d broker(s) down", len(down)))
	}
	fmt.Fprintln(w)
	var shards, leaderless, degraded, unplaced int
	for _, o := range st.Objects {
		if o.State != broker.ObjectPlaced {
			unplaced++
		}
		for _, sh := range o.Shards {
			shards++
			if sh.Leader == nil || !sh.LeaderLive {
				leaderless++
			}
			for _, r := range sh.Replicas {
				if !r.Live {
					degraded++
					break
				}
			}
		}
	}
	fmt.Fprintf(w, "objects: %d, shards %d: %d without a serving leader, %d short of a replica, %d objects not placed\n",
		len(st.Objects), shards, leaderless, degraded, unplaced)
	if leaderless > 0 {
		problems = append(problems, fmt.Sprintf("%d shard(s) without a serving leader", leaderless))
	}
	if degraded > 0 {
		problems = append(problems, fmt.Sprintf("%d shard(s) short of a replica", degraded))
	}
	if unplaced > 0 {
		problems = append(problems, fmt.Sprintf("%d object(s) not placed", unplaced))
	}
	if len(problems) == 0 {
		fmt.Fprintln(w, "healthy (felix cluster status shows every shard)")
	} else {
		fmt.Fprintln(w, "UNHEALTHY (felix cluster status shows every shard)")
	}
	return problems
}
