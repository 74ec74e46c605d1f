package pam_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cpuUsed is the CPU time this process and the emulator have used so far: a
// benchmark figure that a loaded, shared machine does not inflate. The
// emulator counts when testenv.Main started it (a child of this process);
// with an emulator started elsewhere (AWS_ENDPOINT_URL) emuOK is false.
func cpuUsed() (self, emu time.Duration, emuOK bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	me := os.Getpid()
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		s := string(b)
		// pid (comm) state ppid ... utime stime: fields 4, 14 and 15.
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 13 {
			continue
		}
		if ppid, _ := strconv.Atoi(f[1]); ppid != me {
			continue
		}
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		emu += time.Duration(ut+st) * (time.Second / 100) // USER_HZ is 100 on Linux
		emuOK = true
	}
	return self, emu, emuOK
}
