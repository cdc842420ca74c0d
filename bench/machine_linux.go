package bench

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

func describePlatform(m *Machine) {
	m.CPU = cpuModel()
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) == nil {
		m.MemoryBytes = uint64(si.Totalram) * uint64(si.Unit)
	}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		m.Kernel = unix.ByteSliceToString(u.Release[:])
	}
}

// cpuModel reads the first model name of /proc/cpuinfo ("Hardware" or
// "Model" on some ARM kernels).
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		key, value, ok := strings.Cut(s.Text(), ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(key) {
		case "model name", "Hardware", "Model", "cpu model":
			return strings.TrimSpace(value)
		}
	}
	return ""
}

func describeDisk(m *Machine) {
	var fs unix.Statfs_t
	if unix.Statfs(m.DataDir, &fs) != nil {
		return
	}
	m.Filesystem = fsName(int64(fs.Type))
	m.BlockBytes = int64(fs.Bsize)
	m.DiskBytes = fs.Blocks * uint64(fs.Bsize)
	m.DiskFreeBytes = fs.Bavail * uint64(fs.Bsize)
	var st unix.Stat_t
	if unix.Stat(m.DataDir, &st) != nil {
		return
	}
	major, minor := unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev))
	m.Device = mountSource(major, minor)
	m.DeviceModel = blockModel(major, minor)
}

// mountSource finds what is mounted at device major:minor in
// /proc/self/mountinfo: "36 25 8:1 / /data rw - ext4 /dev/sda1 rw".
func mountSource(major, minor uint32) string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	want := fmt.Sprintf("%d:%d", major, minor)
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) < 3 || fields[2] != want {
			continue
		}
		for i, f := range fields {
			if f == "-" && i+2 < len(fields) {
				return fields[i+2]
			}
		}
	}
	return ""
}

// blockModel reads the model of the block device, looking at the parent
// device when major:minor is a partition.
func blockModel(major, minor uint32) string {
	dir, err := filepath.EvalSymlinks(fmt.Sprintf("/sys/dev/block/%d:%d", major, minor))
	if err != nil {
		return ""
	}
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if b, err := os.ReadFile(filepath.Join(d, "device", "model")); err == nil {
			return strings.TrimSpace(string(b))
		}
	}
	return ""
}

// fsName names the file system magic numbers of statfs(2) that a data
// directory is likely to sit on.
func fsName(magic int64) string {
	switch magic {
	case 0xEF53:
		return "ext4" // also ext2/ext3, which share the magic
	case 0x58465342:
		return "xfs"
	case 0x9123683E:
		return "btrfs"
	case 0x01021994:
		return "tmpfs"
	case 0x2FC12FC1:
		return "zfs"
	case 0xF2F52010:
		return "f2fs"
	case 0xCA451A4E:
		return "bcachefs"
	case 0x794C7630:
		return "overlayfs"
	case 0x6969:
		return "nfs"
	case 0x65735546:
		return "fuse"
	case 0x858458F6:
		return "ramfs"
	case 0x4D44:
		return "vfat"
	case 0x5346544E:
		return "ntfs"
	}
	return fmt.Sprintf("fs-0x%x", magic)
}
