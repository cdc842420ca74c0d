package ring

import (
	"fmt"
	"os"
	"strings"
)

// Mode selects which Driver Open builds.
type Mode uint8

const (
	// ModeAuto uses io_uring where the kernel allows it and falls back to
	// the portable driver, with a warning in the log, where it does not.
	ModeAuto Mode = iota
	// ModeUring insists on io_uring; Open fails with ErrUnavailable when
	// the kernel refuses it.
	ModeUring
	// ModePortable uses the worker-pool driver on every platform.
	ModePortable
)

// EnvIO names the environment variable ModeFromEnv reads.
const EnvIO = "FELIX_IO"

func (m Mode) String() string {
	switch m {
	case ModeAuto:
		return "auto"
	case ModeUring:
		return "io_uring"
	case ModePortable:
		return "portable"
	}
	return fmt.Sprintf("mode(%d)", uint8(m))
}

// ParseMode reads "auto", "uring" or "io_uring", or "portable", in any case.
func ParseMode(s string) (Mode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "auto":
		return ModeAuto, nil
	case "uring", "io_uring":
		return ModeUring, nil
	case "portable":
		return ModePortable, nil
	}
	return ModeAuto, fmt.Errorf("%w %q (want auto, io_uring or portable)", ErrUnknownMode, s)
}

// ModeFromEnv reads FELIX_IO; unset or empty means ModeAuto.
func ModeFromEnv() (Mode, error) {
	v := os.Getenv(EnvIO)
	if strings.TrimSpace(v) == "" {
		return ModeAuto, nil
	}
	m, err := ParseMode(v)
	if err != nil {
		return ModeAuto, fmt.Errorf("%s: %w", EnvIO, err)
	}
	return m, nil
}
