//go:build !linux

package sink

import (
	"errors"
	"os"
)

// canSyncFS: no syncfs(2) here; each file is synced on its own.
const canSyncFS = false

func syncFS(*os.File) error { return errors.ErrUnsupported }
