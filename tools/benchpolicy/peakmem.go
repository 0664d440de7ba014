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
// set (VmHWM) that any of them reached, read from /proc every few
// milliseconds. VmHWM only grows, so a process read once more before it
// exits is measured exactly; one shorter than the interval may be missed.
// Where there is no /proc it measures nothing and peak returns 0.
type peakWatcher struct {
	parent int
	stop   chan struct{}
	done   chan struct{}
	mu     sync.Mutex
	max    int64 // bytes
}

// peakInterval is how often the watcher reads /proc.
const peakInterval = 20 * time.Millisecond

func watchPeak(parent int) *peakWatcher {
	w := &peakWatcher{parent: parent, stop: make(chan struct{}), done: make(chan struct{})}
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

// peak stops the watcher and returns the largest peak it saw, in bytes.
func (w *peakWatcher) peak() int64 {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.max
}

func (w *peakWatcher) scan() {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || childOf(pid) != w.parent {
			continue
		}
		if hwm := vmHWM(pid); hwm > 0 {
			w.mu.Lock()
			w.max = max(w.max, hwm)
			w.mu.Unlock()
		}
	}
}

// childOf returns the parent process of pid, or -1.
func childOf(pid int) int {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return -1
	}
	// pid (comm) state ppid ...: comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return -1
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 2 {
		return -1
	}
	ppid, err := strconv.Atoi(fields[1])
	if err != nil {
		return -1
	}
	return ppid
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
