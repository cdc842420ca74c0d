package bench

import "golang.org/x/sys/unix"

func describePlatform(m *Machine) {
	if s, err := unix.Sysctl("machdep.cpu.brand_string"); err == nil {
		m.CPU = s
	}
	if n, err := unix.SysctlUint64("hw.memsize"); err == nil {
		m.MemoryBytes = n
	}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		m.Kernel = unix.ByteSliceToString(u.Release[:])
	}
}

func describeDisk(m *Machine) {
	var fs unix.Statfs_t
	if unix.Statfs(m.DataDir, &fs) != nil {
		return
	}
	m.Filesystem = unix.ByteSliceToString(fs.Fstypename[:])
	m.Device = unix.ByteSliceToString(fs.Mntfromname[:])
	m.BlockBytes = int64(fs.Bsize)
	m.DiskBytes = fs.Blocks * uint64(fs.Bsize)
	m.DiskFreeBytes = fs.Bavail * uint64(fs.Bsize)
}
