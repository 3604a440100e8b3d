package sink

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Lock takes an exclusive flock(2) on the file name in the folder, which
// the kernel releases when the holder exits, however it exits: a lock of a
// killed run never outlives it, so ttl is not needed. The file says who
// holds it (Holder, as JSON), for the message of a run that finds it
// taken.
//
// The file is never at its name unheld or empty: it is written and locked
// under a temporary name first, then linked to name, which fails if a
// lock is there. A run that looks in between (unlock without --force, a
// refused run) would otherwise take a lock being taken for a stale one,
// or be told it is held by nobody. A stale file (its holder was killed) is
// replaced by a rename while Lock holds its flock. Release removes the
// file while still holding it; a run that locked the removed file sees
// that the name now leads elsewhere and tries again.
func (l *Local) Lock(ctx context.Context, name string, who Holder, ttl time.Duration) (Lock, error) {
	path := filepath.Join(l.dir, name)
	h := Holder{Owner: who.Owner, Groups: who.Groups, Token: newToken()}
	var f *os.File // the locked temporary file
	defer func() {
		if f != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	for try := 0; ; try++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if f == nil {
			var err error
			if f, err = lockedTemp(l.dir, name, path); err != nil {
				return nil, err
			}
		}
		h.Acquired = time.Now().UTC()
		b, _ := json.Marshal(h)
		if err := f.Truncate(0); err != nil {
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if _, err := f.WriteAt(append(b, '\n'), 0); err != nil {
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if testHookBeforeLink != nil {
			testHookBeforeLink(f.Name())
		}
		err := os.Link(f.Name(), path)
		if err == nil {
			os.Remove(f.Name())
			lk := &localLock{f: f, path: path, h: h}
			f = nil
			return lk, nil
		}
		taken := false
		switch {
		case errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.ENOTSUP):
			return nil, fmt.Errorf("lock %s: the folder's file system must support hard links: %w", path, err)
		case errors.Is(err, fs.ErrExist):
			taken, err = takeStale(f.Name(), path)
		}
		switch {
		case taken:
			lk := &localLock{f: f, path: path, h: h}
			f = nil
			return lk, nil
		case errors.Is(err, fs.ErrNotExist) && try < 100:
			// The temporary file went (the holder's prune removes a lock's
			// temporary files, as any of its set's): make another.
			f.Close()
			f = nil
		case err != nil:
			return nil, err
		}
	}
}

// testHookBeforeLink, set by tests, is called with the temporary file's
// name before Lock links it into place.
var testHookBeforeLink func(tmp string)

// lockedTemp creates a temporary file beside path, readable by all, and
// takes its flock.
func lockedTemp(dir, name, path string) (*os.File, error) {
	f, err := os.CreateTemp(dir, "."+name+".*"+tempSuffix)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	// Other runs read the file to name its holder: CreateTemp's 0600
	// would hide it from another user's run.
	err = f.Chmod(0o644)
	if err == nil {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return f, nil
}

// takeStale looks at the lock file at path: a held one is a *LockedError;
// a stale one (no process holds its flock) is replaced by tmp, the locked
// file of the run taking it. It reports false if path changed meanwhile,
// and an fs.ErrNotExist error if tmp is gone.
func takeStale(tmp, path string) (bool, error) {
	old, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil // released meanwhile
	}
	if err != nil {
		return false, fmt.Errorf("lock %s: %w", path, err)
	}
	defer old.Close()
	if err := syscall.Flock(int(old.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return false, fmt.Errorf("lock %s: %w", path, err)
		}
		if !isFile(old, path) {
			return false, nil // another run took the stale file over: look at its
		}
		return false, &LockedError{Lock: path, Holder: readHolder(old)}
	}
	if !isFile(old, path) {
		return false, nil // released and removed meanwhile
	}
	// Holding the stale file's flock: no other run replaces it now.
	if err := os.Rename(tmp, path); err != nil {
		return false, fmt.Errorf("lock %s: %w", path, err)
	}
	return true, nil
}

// isFile reports whether path still names the open file f.
func isFile(f *os.File, path string) bool {
	held, err1 := f.Stat()
	now, err2 := os.Stat(path)
	return err1 == nil && err2 == nil && os.SameFile(held, now)
}

// readHolder returns what the lock file f says of its holder: the JSON
// of Holder, or the text of an older sitemapgen.
func readHolder(f *os.File) Holder {
	raw, _ := io.ReadAll(io.LimitReader(f, 64<<10))
	h, err := parseHolder(raw)
	if err != nil {
		h = Holder{Owner: strings.TrimSpace(string(raw))}
	}
	if h.Owner == "" {
		h.Owner = "another run"
	}
	return h
}

type localLock struct {
	f    *os.File
	path string
	h    Holder
}

func (l *localLock) Holder() Holder { return l.h }

// Err reports the lock lost once its file was removed by force (Unlock):
// another run may hold the new one. It looks every time (two system
// calls): a publish asks just before its switch, its prune and its
// cleanup, and an earlier answer could be stale by then.
func (l *localLock) Err() error {
	if !isFile(l.f, l.path) {
		return errors.New("its file was removed (sitemapgen unlock --force)")
	}
	return nil
}

func (l *localLock) Renew(ctx context.Context) error { return l.Err() }

func (l *localLock) Release(ctx context.Context) error {
	// Removed while held: nobody can take the old file for the lock. A
	// lock removed by force (Unlock) may have a new holder: its file stays.
	var err error
	if isFile(l.f, l.path) {
		err = os.Remove(l.path)
	}
	if cerr := l.f.Close(); err == nil { // closing drops the flock
		err = cerr
	}
	return err
}

// Unlock removes the lock file name. A file no process holds a flock on
// is stale (its run was killed): it is removed. One a process holds is
// live, and the kernel proves that process is alive (on this host, or on
// another that mounts the folder): it is removed only with force, and
// that process is not stopped.
func (l *Local) Unlock(ctx context.Context, name string, force bool) (Holder, error) {
	path := filepath.Join(l.dir, name)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return Holder{}, fmt.Errorf("unlock %s: %w", path, fs.ErrNotExist)
	}
	if err != nil {
		return Holder{}, fmt.Errorf("unlock %s: %w", path, err)
	}
	defer f.Close()
	h := readHolder(f)
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	switch {
	case errors.Is(err, syscall.EWOULDBLOCK):
		if !force {
			return h, &LockedError{Lock: path, Holder: h}
		}
	case err != nil:
		return h, fmt.Errorf("unlock %s: %w", path, err)
	case !isFile(f, path):
		return h, fmt.Errorf("unlock %s: %w", path, fs.ErrNotExist) // released meanwhile
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return h, fmt.Errorf("unlock %s: %w", path, err)
	}
	return h, nil
}

// Held looks at the lock file name: held when a process holds its flock
// (a shared flock of ours fails). The shared flock, taken for a moment
// when the file is stale, can make a run taking the lock just then find it
// held: that run exits, publishing nothing, and never overlaps another.
func (l *Local) Held(ctx context.Context, name string) error {
	path := filepath.Join(l.dir, name)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("look at lock %s: %w", path, err)
	}
	defer f.Close() // drops the shared flock
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	switch {
	case errors.Is(err, syscall.EWOULDBLOCK):
		return &LockedError{Lock: path, Holder: readHolder(f)}
	case err != nil:
		return fmt.Errorf("look at lock %s: %w", path, err)
	}
	return nil
}
