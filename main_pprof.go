//go:build pprof

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
)

// A build with the pprof tag (tools/benchpolicy -pprof) writes a CPU
// profile of each provider process into $QTAIL_CPUPROFILE_DIR.
func init() {
	dir := os.Getenv("QTAIL_CPUPROFILE_DIR")
	if dir == "" {
		return
	}
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("cpu-%d.pprof", os.Getpid())))
	if err != nil {
		return
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return
	}
	stopProfile = func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}
}
