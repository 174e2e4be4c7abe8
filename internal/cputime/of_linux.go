package cputime

import (
	"bytes"
	"os"
	"strconv"
	"time"
)

// Of returns the CPU time process pid has used (user and system, its
// threads together), and whether the system says. Linux reports it in
// /proc/PID/stat in clock ticks of 1/100 s (USER_HZ, fixed for that file
// whatever the kernel's own tick).
func Of(pid int) (time.Duration, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name, in parentheses, may hold spaces: the fields
	// counted from the state after it, utime and stime are the 12th and
	// 13th.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	fields := bytes.Fields(b[i+1:])
	if len(fields) < 13 {
		return 0, false
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(string(f), 10, 64)
		if err != nil {
			return 0, false
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond, true
}
