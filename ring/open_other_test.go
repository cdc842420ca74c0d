//go:build !linux

package ring

import (
	"errors"
	"testing"
)

func TestNonLinuxAutoIsPortableAndUringIsRefused(t *testing.T) {
	if d := openDriver(t, Config{}); d.Kind() != KindPortable {
		t.Fatalf("ModeAuto gave %v", d.Kind())
	}
	if _, err := Open(Config{Mode: ModeUring}); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("ModeUring: %v, want ErrUnavailable", err)
	}
}
