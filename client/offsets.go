package client

import "unsafe"

// checkNotNegative refuses, before anything is sent, an offset no record
// can have.
func checkNotNegative(offsets []int64) error {
	for _, o := range offsets {
		if o < 0 {
			return localInvalid("offsets", "an offset is never negative")
		}
	}
	return nil
}

// wireOffsets views offsets as the protocol's u64 offsets, without a copy:
// the two have one size and layout, and checkOffsets has refused any
// negative one before a frame is encoded.
func wireOffsets(offsets []int64) []uint64 {
	if len(offsets) == 0 {
		return nil
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(&offsets[0])), len(offsets))
}

// clientOffsets views the protocol's u64 offsets as the client's int64
// ones, without a copy. Offsets stay below 2^63: a shard would need
// billions of years at a billion records a second to pass it.
func clientOffsets(offsets []uint64) []int64 {
	if len(offsets) == 0 {
		return nil
	}
	return unsafe.Slice((*int64)(unsafe.Pointer(&offsets[0])), len(offsets))
}
