package sink

import (
	"os"

	"golang.org/x/sys/unix"
)

// canSyncFS: Linux syncs a whole file system in one call (syncfs(2)).
const canSyncFS = true

// syncFS makes every file of the file system holding f durable.
func syncFS(f *os.File) error { return unix.Syncfs(int(f.Fd())) }
