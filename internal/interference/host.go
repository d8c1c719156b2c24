package interference

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"vigil/internal/wire"
)

// sysRoot and procRoot are where host facts are read (tests point them
// at a fixture).
var sysRoot, procRoot = "/sys", "/proc"

// Thresholds of the host warnings; see Warn.
const (
	warnLoad1       = 0.5     // load average before start
	warnCPUPressure = 10.0    // cpu "some" avg10, percent
	warnMemFree     = 1 << 30 // MemAvailable, bytes
)

// ReadHost describes the host now, with warnings.
func ReadHost() wire.HostState {
	h := wire.HostState{MemAvailable: -1, SwapTotal: -1, SwapUsed: -1, Load1: -1, CPUPressure: -1, Governors: []string{}}
	govs := map[string]bool{}
	files, _ := filepath.Glob(filepath.Join(sysRoot, "devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor"))
	for _, f := range files {
		if g := readTrim(f); g != "" {
			govs[g] = true
		}
	}
	for g := range govs {
		h.Governors = append(h.Governors, g)
	}
	sort.Strings(h.Governors)
	switch {
	case readTrim(filepath.Join(sysRoot, "devices/system/cpu/cpufreq/boost")) == "1":
		h.Boost = "on"
	case readTrim(filepath.Join(sysRoot, "devices/system/cpu/cpufreq/boost")) == "0":
		h.Boost = "off"
	case readTrim(filepath.Join(sysRoot, "devices/system/cpu/intel_pstate/no_turbo")) == "0":
		h.Boost = "on"
	case readTrim(filepath.Join(sysRoot, "devices/system/cpu/intel_pstate/no_turbo")) == "1":
		h.Boost = "off"
	}
	switch readTrim(filepath.Join(sysRoot, "devices/system/cpu/smt/active")) {
	case "1":
		h.SMT = "on"
	case "0":
		h.SMT = "off"
	}
	h.IsolatedCPUs = readTrim(filepath.Join(sysRoot, "devices/system/cpu/isolated"))
	if data, err := os.ReadFile(filepath.Join(procRoot, "meminfo")); err == nil {
		mem := ParseMeminfo(string(data))
		h.MemAvailable = mem["MemAvailable"]
		if t, ok := mem["SwapTotal"]; ok {
			h.SwapTotal = t
			h.SwapUsed = t - mem["SwapFree"]
		}
	}
	if f := strings.Fields(readTrim(filepath.Join(procRoot, "loadavg"))); len(f) > 0 {
		if v, err := strconv.ParseFloat(f[0], 64); err == nil {
			h.Load1 = v
		}
	}
	if data, err := os.ReadFile(filepath.Join(procRoot, "pressure/cpu")); err == nil {
		h.CPUPressure = parseSomeAvg10(string(data))
	}
	h.Warnings = Warn(h)
	return h
}

// Warn lists the conditions of h that make wall-time comparisons less
// trustworthy.
func Warn(h wire.HostState) []string {
	w := []string{}
	for _, g := range h.Governors {
		if g != "performance" {
			w = append(w, fmt.Sprintf("CPU frequency governor %q: the clock follows load, so arms that load the CPU differently run at different speeds", g))
		}
	}
	if h.Boost == "on" {
		w = append(w, "frequency boost is on: clock speed depends on temperature and on how many cores are busy")
	}
	if h.SMT == "on" {
		w = append(w, "SMT is on: work on a sibling hardware thread slows a sample")
	}
	if h.Load1 > warnLoad1 {
		w = append(w, fmt.Sprintf("load average %.2f before start: the host is not idle", h.Load1))
	}
	if h.CPUPressure > warnCPUPressure {
		w = append(w, fmt.Sprintf("CPU pressure %.0f%% (some, avg10) before start: tasks are already waiting for CPU", h.CPUPressure))
	}
	if h.SwapUsed > 0 {
		w = append(w, fmt.Sprintf("%d MiB of swap in use: page-ins may stall samples", h.SwapUsed>>20))
	}
	if h.MemAvailable >= 0 && h.MemAvailable < warnMemFree {
		w = append(w, fmt.Sprintf("only %d MiB of memory available", h.MemAvailable>>20))
	}
	return w
}

func readTrim(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

// ParseMeminfo returns /proc/meminfo's fields in bytes.
func ParseMeminfo(s string) map[string]int64 {
	out := map[string]int64{}
	for _, line := range strings.Split(s, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue
		}
		if len(f) > 1 && f[1] == "kB" {
			n *= 1024
		}
		out[k] = n
	}
	return out
}

// parseSomeAvg10 reads avg10= of a PSI file's "some" line; -1 if absent.
func parseSomeAvg10(psi string) float64 {
	if v, ok := psiSome(psi, "avg10"); ok {
		if x, err := strconv.ParseFloat(v, 64); err == nil {
			return x
		}
	}
	return -1
}
