package sink

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Lock takes an exclusive flock(2) on the file name in the folder, which
// the kernel releases when the holder exits, however it exits: a lock of a
// killed run never outlives it, so ttl is not needed. Release removes the
// file while still holding it; a run that locked the removed file sees that
// the name now leads elsewhere and tries again.
func (l *Local) Lock(ctx context.Context, name, owner string, ttl time.Duration) (Lock, error) {
	path := filepath.Join(l.dir, name)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				holder, _ := os.ReadFile(path)
				return nil, fmt.Errorf("%w: %s is locked by %s", ErrLocked, path, describeHolder(holder))
			}
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		held, err1 := f.Stat()
		now, err2 := os.Stat(path)
		if err1 == nil && err2 == nil && os.SameFile(held, now) {
			// Say who holds it, for the message of a run that finds it taken.
			if err := f.Truncate(0); err == nil {
				f.WriteAt([]byte(owner+"\n"), 0)
			}
			return &localLock{f: f, path: path}, nil
		}
		f.Close() // the holder released and removed it meanwhile
	}
}

func describeHolder(b []byte) string {
	if s := strings.TrimSpace(string(b)); s != "" {
		return s
	}
	return "another run"
}

type localLock struct {
	f    *os.File
	path string
}

func (l *localLock) Err() error { return nil }

func (l *localLock) Release(ctx context.Context) error {
	// Removed while held: nobody can take the old file for the lock.
	err := os.Remove(l.path)
	if cerr := l.f.Close(); err == nil { // closing drops the flock
		err = cerr
	}
	return err
}
