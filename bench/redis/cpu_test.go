package redisbench

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicksPerSecond is USER_HZ, the unit of the CPU times in
// /proc/<pid>/stat: 100 on every Linux architecture.
const clockTicksPerSecond = 100

// cpuTime is a server process's CPU time so far (user and system, all its
// threads), from /proc; ok is false where there is none (no pid named, not
// Linux). A round's CPU time over its operations is what one operation
// costs the server, a figure other work on a shared machine moves far less
// than it moves throughput.
func cpuTime(pid string) (time.Duration, bool) {
	if pid == "" {
		return 0, false
	}
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name (field 2) is in parentheses and may hold spaces:
	// count the fields after its closing one. utime and stime are fields
	// 14 and 15.
	end := strings.LastIndexByte(string(b), ')')
	if end < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[end+1:]))
	if len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(utime+stime) * time.Second / clockTicksPerSecond, true
}
