package bench

import (
	"runtime"
	"strings"
	"testing"
)

func TestDescribeMachineSeesTheDataDirsFileSystem(t *testing.T) {
	m := DescribeMachine(t.TempDir())
	if m.Cores != runtime.NumCPU() || m.GoVersion != runtime.Version() || m.OS != runtime.GOOS {
		t.Errorf("runtime facts wrong: %+v", m)
	}
	if runtime.GOOS == "linux" || runtime.GOOS == "darwin" {
		if m.Filesystem == "" || m.DiskBytes == 0 || m.BlockBytes == 0 || m.MemoryBytes == 0 || m.Kernel == "" {
			t.Errorf("statfs or platform facts missing: %+v", m)
		}
	}
	s := m.String()
	if !strings.Contains(s, m.DataDir) || !strings.Contains(s, m.GoVersion) {
		t.Errorf("summary %q lacks the data dir or Go version", s)
	}
	t.Logf("%s", s)
}
