//go:build !linux

package ring

import (
	"fmt"
	"runtime"
)

func openUring(Config) (Driver, error) {
	return nil, fmt.Errorf("%w: io_uring exists only on Linux, this is %s", ErrUnavailable, runtime.GOOS)
}
