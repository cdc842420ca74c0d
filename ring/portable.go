package ring

import "sync"

// portableDriver runs submitted operations with ordinary blocking system
// calls on a bounded pool of worker goroutines fed by a bounded queue, and
// waiting callers' operations on their own threads while few are in
// progress (waitPath). It mimics the kernel's link semantics: a chain runs
// in order on one worker, and an error or a short transfer in a linked
// operation completes the rest of the chain with -ECANCELED, unrun.
type portableDriver struct {
	hooks    *hooks
	chainMax int

	mu         sync.Mutex
	notEmpty   sync.Cond // on mu: a chain was queued, or Close began draining
	notFull    sync.Cond // on mu: a chain left the queue, or a Submit ended
	queue      []queued  // ring buffer of Entries operations
	qHead      int
	qLen       int
	submitters int
	closed     bool // no new Submit
	draining   bool // workers leave once the queue is empty

	workers sync.WaitGroup

	// The waiting path (waitpath.go): WriteAt, ReadAt, Fdatasync and
	// WriteAtSync, run direct or through the workers.
	waitPath
}

// queued is one operation waiting for a worker; end marks the last of a chain.
type queued struct {
	c   *Completion
	end bool
}

func newPortable(cfg Config) *portableDriver {
	d := &portableDriver{
		hooks:    cfg.hooks,
		chainMax: int(cfg.Entries),
		queue:    make([]queued, cfg.Entries),
	}
	d.notEmpty.L = &d.mu
	d.notFull.L = &d.mu
	d.waitPath.init(d, cfg.hooks)
	d.workers.Add(cfg.Workers)
	for range cfg.Workers {
		w := newWorker(int(cfg.Entries))
		go d.work(w)
	}
	return d
}

// Kind reports KindPortable.
func (d *portableDriver) Kind() Kind { return KindPortable }

// Submit implements Driver: it queues cs chain by chain, blocking while the
// queue has no room for the next chain.
func (d *portableDriver) Submit(cs []*Completion) error {
	if len(cs) == 0 {
		return nil
	}
	if err := checkBatch(cs, d.chainMax); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return ErrClosed
	}
	d.submitters++
	for len(cs) > 0 {
		k := chainLen(cs)
		for len(d.queue)-d.qLen < k {
			if d.hooks.slotWait != nil {
				d.hooks.slotWait()
			}
			d.notFull.Wait()
		}
		d.push(cs[:k])
		d.notEmpty.Signal()
		cs = cs[k:]
	}
	d.submitters--
	if d.closed {
		d.notFull.Broadcast()
	}
	return nil
}

func (d *portableDriver) push(chain []*Completion) {
	for i, c := range chain {
		d.queue[(d.qHead+d.qLen)%len(d.queue)] = queued{c: c, end: i == len(chain)-1}
		d.qLen++
	}
}

// popChain moves the next chain into dst; it returns an empty slice when
// the driver is drained. Blocks while the queue is empty.
func (d *portableDriver) popChain(dst []*Completion) []*Completion {
	d.mu.Lock()
	defer d.mu.Unlock()
	for d.qLen == 0 && !d.draining {
		d.notEmpty.Wait()
	}
	for d.qLen > 0 {
		q := d.queue[d.qHead]
		d.queue[d.qHead] = queued{}
		d.qHead = (d.qHead + 1) % len(d.queue)
		d.qLen--
		dst = append(dst, q.c)
		if q.end {
			break
		}
	}
	d.notFull.Broadcast()
	return dst
}

func (d *portableDriver) work(w *worker) {
	defer d.workers.Done()
	defer w.close()
	for {
		chain := d.popChain(w.chain[:0])
		if len(chain) == 0 {
			return
		}
		w.runChain(chain)
		clear(chain)
	}
}

// runChain runs chain in order, calling each Done as its operation ends.
func (w *worker) runChain(chain []*Completion) {
	canceled := false
	for _, c := range chain {
		if canceled {
			c.Res = resCanceled
		} else {
			c.Res = w.run(c)
			canceled = c.Link && breaksLink(c)
		}
		if c.Done != nil {
			c.Done(c)
		}
	}
}

// Close stops new Submits, lets the Submits in progress finish, waits for
// the workers to run everything queued and call every Done, and stops them.
// It must not be called from a Done callback.
func (d *portableDriver) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return ErrClosed
	}
	d.closed = true
	d.closing.Store(true)
	d.mu.Unlock()
	if d.hooks.closeWait != nil {
		d.hooks.closeWait()
	}
	d.mu.Lock()
	for d.submitters > 0 {
		d.notFull.Wait()
	}
	d.draining = true
	d.notEmpty.Broadcast()
	d.mu.Unlock()
	d.workers.Wait()
	return nil
}
