//go:build !linux

package spill

import (
	"errors"
	"os"
)

func createAnonymous(dir string) (*os.File, error) { return createRemoved(dir) }

func discard(*os.File, int64, int64) error { return errors.ErrUnsupported }
