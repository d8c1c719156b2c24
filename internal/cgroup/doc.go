// Package cgroup manages the cgroup v2 session a recorded run lives in.
//
// A session is a fresh directory created as a child of vigil's own v2 cgroup
// and named vigil-<pid>-<runid>; its owner holds a flock on the directory
// for as long as it lives. A session left behind by a vigil that died (its
// pid gone and its lock free) is removed by the next one, after its
// remaining processes are killed.
//
// Only core cgroup files are used (cgroup.procs, cgroup.events, cgroup.freeze,
// cgroup.kill); no controller is ever enabled, because vigil itself may run
// inside a cgroup whose no-internal-processes rule forbids it, and on hybrid
// hosts the v2 hierarchy has no controllers at all.
//
// Waiting is event driven: cgroup.events is watched with inotify, so no wait
// in this package sleeps for a fixed time.
package cgroup
