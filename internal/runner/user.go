//go:build linux

package runner

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"vigil/internal/capture"
	"vigil/internal/wire"
)

// resolveUser turns --user NAME|UID[:GROUP|GID] into the credentials the
// child is started with. A name (or a uid with a passwd entry) brings its
// primary group and supplementary groups; a bare uid without one needs a
// group; an explicit group replaces the primary group and drops the
// supplementary ones.
func resolveUser(spec string) (*syscall.Credential, error) {
	who, group, hasGroup := strings.Cut(spec, ":")
	if who == "" || (hasGroup && group == "") {
		return nil, fmt.Errorf("--user %q: want NAME, UID, NAME:GROUP or UID:GID", spec)
	}
	cred := &syscall.Credential{}
	var u *user.User
	if id, err := strconv.ParseUint(who, 10, 32); err == nil {
		cred.Uid = uint32(id)
		u, _ = user.LookupId(who)
	} else {
		if u, err = user.Lookup(who); err != nil {
			return nil, fmt.Errorf("--user %q: no such user", spec)
		}
		id, err := strconv.ParseUint(u.Uid, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("--user %q: uid %q of %s is not a number", spec, u.Uid, who)
		}
		cred.Uid = uint32(id)
	}
	switch {
	case hasGroup:
		gid, err := strconv.ParseUint(group, 10, 32)
		if err != nil {
			g, lerr := user.LookupGroup(group)
			if lerr != nil {
				return nil, fmt.Errorf("--user %q: no such group %q", spec, group)
			}
			if gid, err = strconv.ParseUint(g.Gid, 10, 32); err != nil {
				return nil, fmt.Errorf("--user %q: gid %q of group %s is not a number", spec, g.Gid, group)
			}
		}
		cred.Gid = uint32(gid)
		cred.Groups = []uint32{}
	case u != nil:
		gid, err := strconv.ParseUint(u.Gid, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("--user %q: gid %q is not a number", spec, u.Gid)
		}
		cred.Gid = uint32(gid)
		ids, err := u.GroupIds()
		if err != nil {
			return nil, fmt.Errorf("--user %q: supplementary groups: %v", spec, err)
		}
		for _, s := range ids {
			if g, err := strconv.ParseUint(s, 10, 32); err == nil && uint32(g) != cred.Gid {
				cred.Groups = append(cred.Groups, uint32(g))
			}
		}
		if cred.Groups == nil {
			cred.Groups = []uint32{}
		}
	default:
		return nil, fmt.Errorf("--user %q: uid %d has no passwd entry; give its group too (UID:GID)", spec, cred.Uid)
	}
	slices.Sort(cred.Groups)
	if cred.Uid == 0 {
		return nil, fmt.Errorf("--user %q: is root; --user is for running the command unprivileged", spec)
	}
	return cred, nil
}

// checkCanSwitch requires the capabilities that starting the child as
// another user takes.
func checkCanSwitch() error {
	has, err := capture.EffectiveCaps()
	if err != nil {
		return err
	}
	if !has(unix.CAP_SETUID) || !has(unix.CAP_SETGID) {
		return errors.New("--user: switching users needs CAP_SETUID and CAP_SETGID")
	}
	return nil
}

// childCredentials is what run.json records of the ids the child started
// with: cred when --user set them, else vigil's own.
func childCredentials(cred *syscall.Credential) (*wire.Credentials, error) {
	if cred != nil {
		return &wire.Credentials{UID: cred.Uid, GID: cred.Gid, Groups: append([]uint32{}, cred.Groups...)}, nil
	}
	groups, err := os.Getgroups()
	if err != nil {
		return nil, err
	}
	c := &wire.Credentials{UID: uint32(os.Geteuid()), GID: uint32(os.Getegid()), Groups: []uint32{}}
	for _, g := range groups {
		if uint32(g) != c.GID {
			c.Groups = append(c.Groups, uint32(g))
		}
	}
	slices.Sort(c.Groups)
	return c, nil
}
