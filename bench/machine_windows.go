package bench

import (
	"fmt"
	"os"

	"golang.org/x/sys/windows"
)

func describePlatform(m *Machine) {
	m.CPU = os.Getenv("PROCESSOR_IDENTIFIER")
	v := windows.RtlGetVersion()
	m.Kernel = windowsVersion(v.MajorVersion, v.MinorVersion, v.BuildNumber)
}

func windowsVersion(major, minor, build uint32) string {
	return fmt.Sprintf("%d.%d.%d", major, minor, build)
}

func describeDisk(m *Machine) {
	dir, err := windows.UTF16PtrFromString(m.DataDir)
	if err != nil {
		return
	}
	var free, total, totalFree uint64
	if windows.GetDiskFreeSpaceEx(dir, &free, &total, &totalFree) == nil {
		m.DiskBytes, m.DiskFreeBytes = total, free
	}
	var root [windows.MAX_PATH + 1]uint16
	if windows.GetVolumePathName(dir, &root[0], uint32(len(root))) != nil {
		return
	}
	m.Device = windows.UTF16ToString(root[:])
	var fsName [windows.MAX_PATH + 1]uint16
	if windows.GetVolumeInformation(&root[0], nil, 0, nil, nil, nil, &fsName[0], uint32(len(fsName))) == nil {
		m.Filesystem = windows.UTF16ToString(fsName[:])
	}
}
