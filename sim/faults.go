package sim

import (
	"slices"
	"testing/synctest"
	"time"

	"github.com/felixbroker/felix/cluster/peer"
	"github.com/felixbroker/felix/segment/vfs"
)

// The kinds of fault a run injects.
const (
	faultKill       = "kill"          // a power cut of a broker, restarted at the end on what its disk kept
	faultDisk       = "disk-replaced" // a power cut, restarted on an empty disk with a new disk id, replicated again
	faultFreeze     = "freeze"        // a broker's messages held past its lease, then let go
	faultPartition  = "partition"     // a broker cut off from every other, both ways
	faultOneWay     = "one-way"       // a broker's messages out (or in) lost, the other way working
	faultDrop       = "drop"          // every route loses a share of its messages
	faultDuplicate  = "duplicate"     // every route delivers a share twice
	faultReorder    = "reorder"       // every route's messages may overtake each other
	faultDelay      = "delay"         // a broker's routes slowed down
	faultPauseCP    = "cp-pause"      // the control plane stopped (its messages held, its clock still)
	faultKillCP     = "cp-kill"       // the control plane replaced by a new term, mid-promotion when one is under way
	faultStall      = "fsync-stall"   // a broker's fsyncs held, up to a second
	faultKindsCount = 12
	// faultBridge is half the partitions (those drawn inward, which a full
	// partition has no use for): the other two brokers cut off from each
	// other both ways, each still reaching the target (the bridge) and the
	// control plane. Not drawn of its own, so seeds keep their draws.
	faultBridge = "bridge"
)

var faultKinds = [faultKindsCount]string{faultKill, faultDisk, faultFreeze, faultPartition, faultOneWay, faultDrop,
	faultDuplicate, faultReorder, faultDelay, faultPauseCP, faultKillCP, faultStall}

// stallMax bounds an fsync stall.
const stallMax = time.Second

// fault is one scheduled fault: it begins at from and is lifted at to.
type fault struct {
	kind     string
	from, to time.Duration
	target   int // a broker's index
	mode     vfs.CrashMode
	inward   bool // one-way: the messages to the broker are lost, not those from it
	begun    bool
	ended    bool
}

// faultPlan is a run's faults, drawn from its seed when the world is
// made. Touched by the simulator's goroutine only.
type faultPlan struct {
	w      *World
	faults []*fault
	// killCP: a cp-kill has begun and waits for the next fence (or its end).
	killCP bool
}

func newFaultPlan(w *World) *faultPlan {
	p := &faultPlan{w: w}
	disk := false
	for range w.cfg.Faults {
		f := &fault{kind: faultKinds[w.rng.IntN(faultKindsCount)], target: w.rng.IntN(len(w.brokers)), inward: w.rng.IntN(2) == 0}
		if f.kind == faultDisk && disk {
			f.kind = faultKill // one replaced disk a run: two could take every copy of a record
		}
		disk = disk || f.kind == faultDisk
		if f.kind == faultPartition && f.inward {
			f.kind = faultBridge
		}
		switch w.rng.IntN(3) {
		case 0:
			f.mode = vfs.DropUnsynced
		case 1:
			f.mode = vfs.TearLastWrite(1 + w.rng.IntN(64))
		default:
			f.mode = vfs.WriteBackSome(w.rng.IntN(1 << 16))
		}
		span := w.cfg.Duration - 2*w.cfg.Lease
		f.from = w.cfg.Lease/2 + time.Duration(w.rng.Int64N(int64(span)))
		f.to = min(f.from+w.cfg.Lease/2+time.Duration(w.rng.Int64N(int64(4*w.cfg.Lease))), w.cfg.Duration)
		if f.kind == faultStall {
			f.to = f.from + time.Duration(1+w.rng.Int64N(int64(stallMax)))
		}
		p.faults = append(p.faults, f)
	}
	slices.SortStableFunc(p.faults, func(a, b *fault) int { return int(a.from - b.from) })
	return p
}

// poll begins and lifts the faults due at now; at the workload's end it
// lifts every one.
func (p *faultPlan) poll(now time.Duration) {
	for _, f := range p.faults {
		if !f.begun && now >= f.from && now < p.w.cfg.Duration {
			f.begun = true
			p.begin(f)
			synctest.Wait()
		}
		if f.begun && !f.ended && (now >= f.to || now >= p.w.cfg.Duration) {
			f.ended = true
			p.end(f)
			synctest.Wait()
		}
	}
	if p.killCP {
		p.killCP = false
		p.w.trace.add("fault cp-kill: a new term")
		if err := p.w.cp.elect(); err != nil {
			panic("felix/sim: electing a control plane: " + err.Error())
		}
	}
}

// fenced is told of every fence the control plane sends: a cp-kill under
// way strikes then, mid-promotion.
func (p *faultPlan) fenced(*World) {
	for _, f := range p.faults {
		if f.kind == faultKillCP && f.begun && !f.ended {
			f.ended = true
			p.killCP = true
		}
	}
}

func (p *faultPlan) begin(f *fault) {
	w := p.w
	w.stats.Faults[f.kind]++
	b := w.brokers[f.target]
	w.trace.add("fault %s begins on %s (until %v)", f.kind, b.id, f.to)
	switch f.kind {
	case faultKill, faultDisk:
		if b.up() {
			w.kill(b, f.mode)
		}
	case faultFreeze:
		w.net.frozen[b.id] = true
	case faultPartition:
		p.eachRoute(b.id, func(r route, lf *linkFaults) { lf.cut = true })
	case faultBridge:
		p.bridge(b.id, true)
	case faultOneWay:
		p.eachRoute(b.id, func(r route, lf *linkFaults) { lf.cut = (r.to == b.id) == f.inward })
	case faultDrop:
		p.allRoutes(func(r route, lf *linkFaults) { lf.drop = 0.1 })
	case faultDuplicate:
		p.allRoutes(func(r route, _ *linkFaults) { w.net.net.SetFaults(r.from, r.to, peer.Faults{Duplicate: 0.2}) })
	case faultReorder:
		p.allRoutes(func(r route, lf *linkFaults) { lf.reorder = true })
	case faultDelay:
		p.eachRoute(b.id, func(r route, lf *linkFaults) { lf.delay = 20 * time.Millisecond })
	case faultPauseCP:
		w.cp.paused = true
		w.net.frozen[controlID] = true
	case faultStall:
		w.net.stall[b.id] = true
	case faultKillCP:
	}
}

func (p *faultPlan) end(f *fault) {
	w := p.w
	b := w.brokers[f.target]
	w.trace.add("fault %s ends on %s", f.kind, b.id)
	switch f.kind {
	case faultKill, faultDisk:
		if !b.up() {
			if err := w.restart(b, f.kind == faultDisk); err != nil {
				panic("felix/sim: restarting " + b.id + ": " + err.Error())
			}
		}
	case faultFreeze:
		w.net.frozen[b.id] = false
	case faultPartition, faultOneWay:
		p.eachRoute(b.id, func(r route, lf *linkFaults) { lf.cut = false })
	case faultBridge:
		p.bridge(b.id, false)
	case faultDelay:
		p.eachRoute(b.id, func(r route, lf *linkFaults) { lf.delay = 0 })
	case faultDrop:
		p.allRoutes(func(r route, lf *linkFaults) { lf.drop = 0 })
	case faultReorder:
		p.allRoutes(func(r route, lf *linkFaults) { lf.reorder = false })
	case faultDuplicate:
		p.allRoutes(func(r route, _ *linkFaults) { w.net.net.SetFaults(r.from, r.to, peer.Faults{}) })
	case faultStall:
		w.net.stall[b.id] = false
	case faultPauseCP:
		w.cp.paused = false
		w.net.frozen[controlID] = false
	case faultKillCP:
		if !p.killCP { // no fence came in its window: it strikes at its end
			p.killCP = true
		}
	}
}

// nodes are every broker's id and the control plane's.
func (p *faultPlan) nodes() []string {
	out := []string{controlID}
	for _, b := range p.w.brokers {
		out = append(out, b.id)
	}
	return out
}

// eachRoute edits the faults of both directions between id and every
// other node.
func (p *faultPlan) eachRoute(id string, f func(route, *linkFaults)) {
	for _, o := range p.nodes() {
		if o == id {
			continue
		}
		for _, r := range []route{{id, o}, {o, id}} {
			lf := p.w.net.faults[r]
			f(r, &lf)
			p.w.net.faults[r] = lf
		}
	}
}

// bridge cuts (or mends) both directions between every two brokers
// other than the bridge id.
func (p *faultPlan) bridge(id string, cut bool) {
	for _, a := range p.w.brokers {
		for _, b := range p.w.brokers {
			if a != b && a.id != id && b.id != id {
				r := route{a.id, b.id}
				lf := p.w.net.faults[r]
				lf.cut = cut
				p.w.net.faults[r] = lf
			}
		}
	}
}

func (p *faultPlan) allRoutes(f func(route, *linkFaults)) {
	for _, a := range p.nodes() {
		for _, b := range p.nodes() {
			if a != b {
				r := route{a, b}
				lf := p.w.net.faults[r]
				f(r, &lf)
				p.w.net.faults[r] = lf
			}
		}
	}
}
