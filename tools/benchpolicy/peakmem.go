package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// peakWatcher follows the plugin processes that one Terraform command
// starts (its children: the providers) and keeps the largest peak resident
// set (VmHWM) that any of them reached, and the CPU time each used, read
// from /proc every few milliseconds. VmHWM and the CPU time only grow, so
// a process read once more before it exits is measured exactly; one
// shorter than the interval may be missed, and the CPU time of its last
// interval is. Where there is no /proc it measures nothing and peak
// returns 0.
type peakWatcher struct {
	parent int
	stop   chan struct{}
	done   chan struct{}
	mu     sync.Mutex
	max    int64 // bytes
	// ticks is the CPU time (user and system) of each child, in clock
	// ticks.
	ticks map[int]int64
}

// peakInterval is how often the watcher reads /proc.
const peakInterval = 20 * time.Millisecond

// clockTick is the unit of the CPU times of /proc/PID/stat: USER_HZ, 100
// on Linux whatever the kernel's own frequency.
const clockTick = 10 * time.Millisecond

func watchPeak(parent int) *peakWatcher {
	w := &peakWatcher{parent: parent, stop: make(chan struct{}), done: make(chan struct{}), ticks: map[int]int64{}}
	go func() {
		defer close(w.done)
		t := time.NewTicker(peakInterval)
		defer t.Stop()
		for {
			w.scan()
			select {
			case <-w.stop:
				return
			case <-t.C:
			}
		}
	}()
	return w
}

// peak stops the watcher and returns the largest peak it saw, in bytes,
// and the CPU time that the children used together.
func (w *peakWatcher) peak() (int64, time.Duration) {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	var ticks int64
	for _, t := range w.ticks {
		ticks += t
	}
	return w.max, time.Duration(ticks) * clockTick
}

func (w *peakWatcher) scan() {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		ppid, ticks := procStat(pid)
		if ppid != w.parent {
			continue
		}
		hwm := vmHWM(pid)
		w.mu.Lock()
		w.max = max(w.max, hwm)
		w.ticks[pid] = max(w.ticks[pid], ticks)
		w.mu.Unlock()
	}
}

// procStat returns the parent process of pid (-1 when it cannot be read)
// and the CPU time it used, user and system, in clock ticks.
func procStat(pid int) (int, int64) {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return -1, 0
	}
	// pid (comm) state ppid ... utime stime ...: comm may hold spaces and
	// parentheses; utime and stime are the 14th and 15th fields.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return -1, 0
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 13 {
		return -1, 0
	}
	ppid, err := strconv.Atoi(fields[1])
	if err != nil {
		return -1, 0
	}
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return ppid, utime + stime
}

// vmHWM returns the peak resident set of pid in bytes, or 0.
func vmHWM(pid int) int64 {
	status, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(rest)
			if len(f) == 2 && f[1] == "kB" {
				kb, err := strconv.ParseInt(f[0], 10, 64)
				if err == nil {
					return kb * 1024
				}
			}
		}
	}
	return 0
}
