package cluster_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/felixbroker/felix/cluster"
)

// TestPlacement runs the scripts in testdata/: each command changes the
// store and steps the machine (or answers its writes) and prints what the
// machine asked for. Rewrite the expected output with -rewrite, and review
// it as a diff.
func TestPlacement(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		var d *driver
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			if td.Cmd == "new" {
				d = newOrRestart(t, d, td)
				return printActions(d.ready())
			}
			if d == nil {
				td.Fatalf(t, "the script must start with new")
			}
			return runCommand(t, d, td)
		})
	})
}

func newOrRestart(t *testing.T, d *driver, td *datadriven.TestData) *driver {
	var epoch int64
	td.ScanArgs(t, "epoch", &epoch)
	if d == nil {
		return newDriver(t, epoch)
	}
	d.restart(epoch)
	return d
}

func runCommand(t *testing.T, d *driver, td *datadriven.TestData) string {
	switch td.Cmd {
	case "status":
		return printStatus(d.m.Status())
	case "load":
		return printLoad(d.m.Status())
	case "racks":
		return printRacks(d)
	}
	if err := stepCommand(t, d, td); err != nil {
		return "error: " + err.Error() + "\n" + printActions(d.ready())
	}
	return printActions(d.ready())
}

func stepCommand(t *testing.T, d *driver, td *datadriven.TestData) error {
	switch td.Cmd {
	case "join":
		return d.join(scanBroker(t, td))
	case "leave":
		return d.leave(scanString(t, td, "id"), maybeString(t, td, "disk"))
	case "create":
		return d.create(scanSpec(t, td))
	case "delete":
		return d.remove(scanObject(t, td))
	case "done":
		return answer(t, d, td)
	case "fail":
		var seq uint64
		td.ScanArgs(t, "seq", &seq)
		delete(d.inflight, seq)
		return d.step(cluster.WriteFailed{Seq: seq})
	case "overwrite":
		if !d.store.overwrite(scanShard(t, td)) {
			td.Fatalf(t, "no assignment to overwrite")
		}
		return nil
	case "resync":
		return d.resync()
	case "put":
		d.store.put(scanShard(t, td), scanAssignment(t, td, d))
		return nil
	}
	td.Fatalf(t, "unknown command %q", td.Cmd)
	return nil
}

// answer answers the write named by seq=, or every write in flight.
func answer(t *testing.T, d *driver, td *datadriven.TestData) error {
	if td.HasArg("seq") {
		var seq uint64
		td.ScanArgs(t, "seq", &seq)
		return d.answer(seq)
	}
	return d.answerAll()
}

func printActions(acts []cluster.Action) string {
	if len(acts) == 0 {
		return "ok\n"
	}
	var b strings.Builder
	for _, a := range acts {
		b.WriteString(formatAction(a) + "\n")
	}
	return b.String()
}

func formatAction(a cluster.Action) string {
	switch a := a.(type) {
	case cluster.Write:
		return fmt.Sprintf("write %v %v expect=%d epoch=%d seq=%d", a.Shard, a.Assignment, a.ExpectedRevision, a.Epoch, a.Seq)
	case cluster.Delete:
		return fmt.Sprintf("delete %v expect=%d epoch=%d seq=%d", a.Shard, a.ExpectedRevision, a.Epoch, a.Seq)
	case cluster.Unplaced:
		return "unplaced: " + a.Err().Error()
	case cluster.Resync:
		return "resync"
	}
	panic(fmt.Sprintf("unknown action %T", a))
}
