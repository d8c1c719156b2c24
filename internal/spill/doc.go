// Package spill keeps scratch data in an anonymous file: one with no name
// in any directory (O_TMPFILE), so that nothing is left on disk when the
// process ends, however it ends (a crash, SIGKILL). On a file system
// without O_TMPFILE the file has a name for an instant (NamePattern),
// which a process killed in it leaves behind. A recording and a
// verification use it for what would otherwise grow in memory with the
// run (a recording's compressed layer, a verified archive's surface text,
// every distinct path, the time index), so that their memory stays
// bounded whatever the workload does.
package spill
