package check

import (
	"fmt"

	"github.com/anishathalye/porcupine"
)

// CursorOp is an operation of the group cursor model.
type CursorOp = string

// The group cursor model's operations.
const (
	CursorCommit CursorOp = "commit"
	CursorGet    CursorOp = "get"
)

// CursorInput is one operation on a consumer group's cursor: Cursor names
// it (a group and a shard, as the caller spells them).
type CursorInput struct {
	Op     CursorOp
	Cursor string
	Offset uint64 // commit: the position written
}

// CursorOutput is what a get of a cursor read.
type CursorOutput struct {
	Offset uint64
}

// CursorModel is a position per cursor, 0 at first: a commit writes it, a
// get reads it. (A group at the Leader level may move a cursor back at a
// failover, which this model reports: a caller that allows it checks the
// cursor between failovers.)
func CursorModel() porcupine.Model {
	return porcupine.Model{
		Partition: partitionBy(func(in any) string { return in.(CursorInput).Cursor }),
		Init:      func() any { return uint64(0) },
		Step: func(state, input, output any) (bool, any) {
			st, in := state.(uint64), input.(CursorInput)
			out, known := output.(CursorOutput)
			switch in.Op {
			case CursorCommit:
				return true, in.Offset
			case CursorGet:
				return !known || out.Offset == st, st
			}
			return false, st
		},
		DescribeOperation: func(input, output any) string {
			return fmt.Sprintf("%+v -> %+v", input, output)
		},
	}
}

func (in CursorInput) describe() string {
	if in.Op == CursorCommit {
		return fmt.Sprintf("cursor commit %q %d", in.Cursor, in.Offset)
	}
	return fmt.Sprintf("cursor %s %q", in.Op, in.Cursor)
}
func (in CursorInput) accepts(out Output) bool {
	_, ok := out.(CursorOutput)
	return ok
}
func (out CursorOutput) describe() string { return fmt.Sprintf("at %d", out.Offset) }
