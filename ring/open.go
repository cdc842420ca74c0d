package ring

import "strings"

// Open builds the Driver cfg asks for. With ModeAuto it tries io_uring and,
// when the kernel refuses it, logs exactly why at Warn and returns the
// portable driver. With ModeUring a refusal is an error wrapping
// ErrUnavailable that says why.
func Open(cfg Config) (Driver, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	switch cfg.Mode {
	case ModePortable:
		return newPortable(cfg), nil
	case ModeUring:
		return openUring(cfg)
	}
	d, err := openUring(cfg)
	if err == nil {
		return d, nil
	}
	cfg.Logger.Warn("felix/ring: io_uring unavailable, using the portable driver",
		"reason", strings.TrimPrefix(err.Error(), ErrUnavailable.Error()+": "))
	return newPortable(cfg), nil
}
