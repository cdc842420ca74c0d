package ring

import (
	"fmt"
	"syscall"
)

// resCanceled is what the kernel reports for a linked operation that never
// ran because an earlier one in its chain failed or was short.
const resCanceled = -int32(syscall.ECANCELED)

// checkBatch refuses cs before anything of it is queued: a nil or invalid
// Completion, a writev with too many buffers, a chain longer than chainMax.
func checkBatch(cs []*Completion, chainMax int) error {
	run := 0
	for i, c := range cs {
		if err := checkOp(c); err != nil {
			return fmt.Errorf("completion %d: %w", i, err)
		}
		run++
		if run > chainMax {
			return fmt.Errorf("%w: more than %d linked at completion %d", ErrChainTooLong, chainMax, i)
		}
		if !c.Link {
			run = 0
		}
	}
	return nil
}

func checkOp(c *Completion) error {
	if c == nil {
		return fmt.Errorf("%w: nil Completion", ErrInvalid)
	}
	switch c.Op {
	case OpNop, OpFdatasync:
		return nil
	case OpRead, OpWrite:
		return checkTransfer(c.Off, len(c.Buf))
	case OpWritev:
		if len(c.Bufs) > MaxIovecs {
			return fmt.Errorf("%w: %d buffers", ErrTooManyIovecs, len(c.Bufs))
		}
		n := 0
		for _, b := range c.Bufs {
			n += len(b)
			if n > TransferBytesMax {
				break
			}
		}
		return checkTransfer(c.Off, n)
	}
	return fmt.Errorf("%w: unknown %v", ErrInvalid, c.Op)
}

func checkTransfer(off int64, n int) error {
	if off < 0 {
		return fmt.Errorf("%w: negative offset %d", ErrInvalid, off)
	}
	if n > TransferBytesMax {
		return fmt.Errorf("%w: %d bytes in one operation (max %d)", ErrInvalid, n, TransferBytesMax)
	}
	return nil
}

// chainLen is the length of the linked chain cs starts with: up to and
// including the first Completion without Link, or all of cs. A Link on the
// last Completion of a Submit links to nothing.
func chainLen(cs []*Completion) int {
	for i, c := range cs {
		if !c.Link {
			return i + 1
		}
	}
	return len(cs)
}

// wantBytes is the transfer that counts as complete; fewer bytes is a short
// transfer and breaks a link, as the kernel does.
func wantBytes(c *Completion) int {
	switch c.Op {
	case OpRead, OpWrite:
		return len(c.Buf)
	case OpWritev:
		n := 0
		for _, b := range c.Bufs {
			n += len(b)
		}
		return n
	}
	return 0
}

// breaksLink reports whether c, once run, cancels the rest of its chain.
func breaksLink(c *Completion) bool {
	return c.Res < 0 || int(c.Res) != wantBytes(c)
}
