package policy

import (
	"syscall"
	"time"
)

// threadCPU is the CPU time the calling OS thread has used (RUSAGE_THREAD):
// a benchmark figure that a loaded, shared machine does not inflate.
func threadCPU() (time.Duration, bool) {
	const rusageThread = 1
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
