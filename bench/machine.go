package bench

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/felixbroker/felix/bench/internal/units"
)

// Machine describes where a result was measured. Every field is best
// effort: what the platform does not tell is left empty, never guessed.
type Machine struct {
	CPU         string `json:"cpu,omitempty"`
	Cores       int    `json:"cores"`
	MemoryBytes uint64 `json:"memory_bytes,omitempty"`
	OS          string `json:"os"`
	Arch        string `json:"arch"`
	Kernel      string `json:"kernel,omitempty"`
	GoVersion   string `json:"go_version"`

	// The file system holding the data directory, from statfs.
	DataDir       string `json:"data_dir,omitempty"`
	Filesystem    string `json:"filesystem,omitempty"` // ext4, xfs, tmpfs, apfs, NTFS
	Device        string `json:"device,omitempty"`     // what is mounted: /dev/nvme0n1p2
	DeviceModel   string `json:"device_model,omitempty"`
	DiskBytes     uint64 `json:"disk_bytes,omitempty"`
	DiskFreeBytes uint64 `json:"disk_free_bytes,omitempty"`
	BlockBytes    int64  `json:"block_bytes,omitempty"`
}

// DescribeMachine describes this machine and the file system of dataDir
// (empty: the current directory). It never fails; unknown fields stay empty.
func DescribeMachine(dataDir string) Machine {
	if dataDir == "" {
		dataDir = "."
	}
	if abs, err := filepath.Abs(dataDir); err == nil {
		dataDir = abs
	}
	m := Machine{
		Cores:     runtime.NumCPU(),
		OS:        runtime.GOOS,
		Arch:      runtime.GOARCH,
		GoVersion: runtime.Version(),
		DataDir:   dataDir,
	}
	describePlatform(&m)
	describeDisk(&m)
	return m
}

// String is a one-line summary for table and report headers.
func (m Machine) String() string {
	var b strings.Builder
	cpu := m.CPU
	if cpu == "" {
		cpu = "unknown CPU"
	}
	fmt.Fprintf(&b, "%s, %d cores", cpu, m.Cores)
	if m.MemoryBytes > 0 {
		fmt.Fprintf(&b, ", %s memory", units.Bytes(m.MemoryBytes))
	}
	fmt.Fprintf(&b, "; %s/%s", m.OS, m.Arch)
	if m.Kernel != "" {
		fmt.Fprintf(&b, " %s", m.Kernel)
	}
	fmt.Fprintf(&b, "; %s", m.GoVersion)
	if m.DataDir != "" {
		fmt.Fprintf(&b, "; data %s on %s", m.DataDir, orUnknown(m.Filesystem))
		if m.Device != "" {
			fmt.Fprintf(&b, " %s", m.Device)
		}
		if m.DeviceModel != "" {
			fmt.Fprintf(&b, " (%s)", m.DeviceModel)
		}
		if m.DiskBytes > 0 {
			fmt.Fprintf(&b, ", %s free of %s", units.Bytes(m.DiskFreeBytes), units.Bytes(m.DiskBytes))
		}
	}
	return b.String()
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown fs"
	}
	return s
}
