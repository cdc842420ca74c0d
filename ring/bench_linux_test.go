//go:build linux

package ring

import "golang.org/x/sys/unix"

// onTmpfs reports whether dir is on tmpfs, where fdatasync costs nothing
// and a benchmark of it would measure nothing.
func onTmpfs(dir string) bool {
	var st unix.Statfs_t
	return unix.Statfs(dir, &st) == nil && st.Type == unix.TMPFS_MAGIC
}

// dropCache asks the kernel to drop fd's first n bytes from the page cache.
func dropCache(fd, n int) { _ = unix.Fadvise(fd, 0, int64(n), unix.FADV_DONTNEED) }
