package ring

import (
	"errors"
	"testing"
)

func TestParseModeAcceptsEachSpelling(t *testing.T) {
	for in, want := range map[string]Mode{
		"auto": ModeAuto, "AUTO": ModeAuto, " auto ": ModeAuto,
		"uring": ModeUring, "io_uring": ModeUring, "IO_URING": ModeUring,
		"portable": ModePortable, "Portable": ModePortable,
	} {
		got, err := ParseMode(in)
		if got != want || err != nil {
			t.Errorf("ParseMode(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "iouring", "epoll", "uring2"} {
		if _, err := ParseMode(in); !errors.Is(err, ErrUnknownMode) {
			t.Errorf("ParseMode(%q): %v, want ErrUnknownMode", in, err)
		}
	}
	for _, m := range []Mode{ModeAuto, ModeUring, ModePortable} {
		if got, err := ParseMode(m.String()); got != m || err != nil {
			t.Errorf("ParseMode(%v.String()) = %v, %v", m, got, err)
		}
	}
}

func TestModeFromEnvReadsFelixIO(t *testing.T) {
	for in, want := range map[string]Mode{"": ModeAuto, "  ": ModeAuto, "portable": ModePortable, "io_uring": ModeUring} {
		t.Setenv(EnvIO, in)
		if got, err := ModeFromEnv(); got != want || err != nil {
			t.Errorf("FELIX_IO=%q: %v, %v; want %v", in, got, err, want)
		}
	}
	t.Setenv(EnvIO, "fast")
	if _, err := ModeFromEnv(); !errors.Is(err, ErrUnknownMode) {
		t.Errorf("FELIX_IO=fast: %v, want ErrUnknownMode", err)
	}
}

func TestOpenRefusesBadConfig(t *testing.T) {
	for _, cfg := range []Config{
		{Entries: entriesMax + 1},
		{Workers: -1},
		{Workers: workersMax + 1},
		{Mode: Mode(7)},
		{ReapSpin: reapSpinMax + 1},
		{ReapSpin: -1},
	} {
		if d, err := Open(cfg); err == nil {
			d.Close()
			t.Errorf("Open(%+v) succeeded", cfg)
		}
	}
}

func TestOpenPortableIsPortable(t *testing.T) {
	if d := openDriver(t, Config{Mode: ModePortable}); d.Kind() != KindPortable {
		t.Fatalf("ModePortable gave %v", d.Kind())
	}
}
