package segment

import (
	"fmt"
	"strconv"
	"strings"
)

// File name suffixes.
const (
	SegmentSuffix = ".seg"
	IndexSuffix   = ".idx"
)

const baseDigits = 20

// SegmentName is the file name of the segment whose first offset is base.
func SegmentName(base int64) string { return fmt.Sprintf("%020d%s", base, SegmentSuffix) }

// IndexName is the file name of the index of the segment at base.
func IndexName(base int64) string { return fmt.Sprintf("%020d%s", base, IndexSuffix) }

// ParseName reports the base offset and suffix of a segment or index file
// name; ok is false for any other name.
func ParseName(name string) (base int64, suffix string, ok bool) {
	for _, s := range []string{SegmentSuffix, IndexSuffix} {
		digits, found := strings.CutSuffix(name, s)
		if !found || len(digits) != baseDigits {
			continue
		}
		v, err := strconv.ParseInt(digits, 10, 64)
		if err != nil || v < 0 {
			return 0, "", false
		}
		return v, s, true
	}
	return 0, "", false
}
