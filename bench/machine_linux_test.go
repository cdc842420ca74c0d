package bench

import "testing"

func TestFileSystemNames(t *testing.T) {
	for magic, want := range map[int64]string{0xEF53: "ext4", 0x58465342: "xfs", 0x01021994: "tmpfs", 0x1234: "fs-0x1234"} {
		if got := fsName(magic); got != want {
			t.Errorf("fsName(%#x) = %q, want %q", magic, got, want)
		}
	}
}

func TestTmpfsIsNamed(t *testing.T) {
	m := DescribeMachine("/dev/shm")
	if m.Filesystem != "tmpfs" {
		t.Skipf("/dev/shm is %q here", m.Filesystem)
	}
	if m.Device == "" {
		t.Errorf("no mount source found for /dev/shm in mountinfo: %+v", m)
	}
}
