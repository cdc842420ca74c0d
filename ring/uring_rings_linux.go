//go:build linux

package ring

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// rings is the memory shared with the kernel: the SQ ring, the CQ ring (the
// same mapping when IORING_FEAT_SINGLE_MMAP) and the SQE array. Pointers
// into it are read and written with sync/atomic where the kernel reads or
// writes concurrently (heads, tails, flags); Go's atomics are sequentially
// consistent, which is at least the acquire/release the kernel pairs with.
type rings struct {
	sqMap, cqMap, sqeMap []byte // cqMap is nil when it shares sqMap

	sqHead    *uint32 // written by the kernel
	sqTail    *uint32 // written by us (release), read by the kernel (acquire)
	sqFlags   *uint32 // kernel: IORING_SQ_CQ_OVERFLOW, ...
	sqMask    uint32
	sqEntries uint32
	sqes      unsafe.Pointer

	cqHead     *uint32 // written by us (release) once CQEs are copied out
	cqTail     *uint32 // written by the kernel (release), read by us (acquire)
	cqOverflow *uint32 // completions the kernel had to drop
	cqMask     uint32
	cqEntries  uint32
	cqes       unsafe.Pointer
}

func mapRings(fd int, p *uringParams) (*rings, error) {
	sqBytes := int(p.sqOff.array) + int(p.sqEntries)*4
	cqBytes := int(p.cqOff.cqes) + int(p.cqEntries)*cqeSize
	single := p.features&featSingleMmap != 0
	if single {
		sqBytes = max(sqBytes, cqBytes)
	}
	r := &rings{}
	var err error
	if r.sqMap, err = mmapRing(fd, offSQRing, sqBytes); err != nil {
		return nil, fmt.Errorf("mmap SQ ring: %w", err)
	}
	r.cqMap = r.sqMap
	if !single {
		if r.cqMap, err = mmapRing(fd, offCQRing, cqBytes); err != nil {
			r.unmap()
			return nil, fmt.Errorf("mmap CQ ring: %w", err)
		}
	}
	if r.sqeMap, err = mmapRing(fd, offSQEs, int(p.sqEntries)*sqeSize); err != nil {
		r.unmap()
		return nil, fmt.Errorf("mmap SQE array: %w", err)
	}
	r.locate(p)
	return r, nil
}

func mmapRing(fd int, off int64, n int) ([]byte, error) {
	return unix.Mmap(fd, off, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
}

func (r *rings) locate(p *uringParams) {
	sq, cq := unsafe.Pointer(&r.sqMap[0]), unsafe.Pointer(&r.cqMap[0])
	r.sqHead = (*uint32)(unsafe.Add(sq, p.sqOff.head))
	r.sqTail = (*uint32)(unsafe.Add(sq, p.sqOff.tail))
	r.sqFlags = (*uint32)(unsafe.Add(sq, p.sqOff.flags))
	r.sqMask = *(*uint32)(unsafe.Add(sq, p.sqOff.ringMask))
	r.sqEntries = *(*uint32)(unsafe.Add(sq, p.sqOff.ringEntries))
	r.sqes = unsafe.Pointer(&r.sqeMap[0])
	r.cqHead = (*uint32)(unsafe.Add(cq, p.cqOff.head))
	r.cqTail = (*uint32)(unsafe.Add(cq, p.cqOff.tail))
	r.cqOverflow = (*uint32)(unsafe.Add(cq, p.cqOff.overflow))
	r.cqMask = *(*uint32)(unsafe.Add(cq, p.cqOff.ringMask))
	r.cqEntries = *(*uint32)(unsafe.Add(cq, p.cqOff.ringEntries))
	r.cqes = unsafe.Add(cq, p.cqOff.cqes)
	// SQE i always sits at SQ array index i, so the array is written once.
	array := unsafe.Slice((*uint32)(unsafe.Add(sq, p.sqOff.array)), r.sqEntries)
	for i := range array {
		array[i] = uint32(i)
	}
}

func (r *rings) sqe(tail uint32) *sqe {
	return (*sqe)(unsafe.Add(r.sqes, uintptr(tail&r.sqMask)*sqeSize))
}

func (r *rings) cqe(head uint32) *cqe {
	return (*cqe)(unsafe.Add(r.cqes, uintptr(head&r.cqMask)*cqeSize))
}

// sqOverflowed reports IORING_SQ_CQ_OVERFLOW: completions wait in the
// kernel's overflow list for room in the CQ ring.
func (r *rings) sqOverflowed() bool {
	return atomic.LoadUint32(r.sqFlags)&sqCQOverflow != 0
}

func (r *rings) unmap() {
	if r.sqeMap != nil {
		_ = unix.Munmap(r.sqeMap)
	}
	if r.cqMap != nil && (r.sqMap == nil || &r.cqMap[0] != &r.sqMap[0]) {
		_ = unix.Munmap(r.cqMap)
	}
	if r.sqMap != nil {
		_ = unix.Munmap(r.sqMap)
	}
	*r = rings{}
}
