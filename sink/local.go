package sink

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sync/errgroup"
)

// Local is a folder on the local file system. Put writes to a temporary file
// in the folder, syncs it and renames it into place.
type Local struct {
	dir string
	// The folder, open: files are created and renamed relative to it, so
	// the kernel does not walk the folder's path again for each (a grouped
	// run writes a few thousand). Closed when the Local is collected.
	at *os.File
}

// NewLocal returns a Local sink for dir, creating the folder if needed.
func NewLocal(dir string) (*Local, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("output folder: %w", err)
	}
	at, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("output folder: %w", err)
	}
	return &Local{dir: dir, at: at}, nil
}

// atFD returns the descriptor of the open folder; the caller keeps l alive
// while it uses it.
func (l *Local) atFD() int { return int(l.at.Fd()) }

// LocalConnections is Local's Connections: a write takes a few
// milliseconds, so more would only hold more files in memory.
const LocalConnections = 2

// tempSuffix ends the temporary file Put writes first: .NAME.DIGITS.tmp.
const tempSuffix = ".tmp"

// TempOf returns the name a temporary file of Put is for, and whether tmp is
// one: ".NAME.DIGITS.tmp" (os.CreateTemp's random part is decimal digits).
// The whole name is kept, so the temporary files of one name are told apart
// from those of every other name, prefixes included.
func TempOf(tmp string) (name string, ok bool) {
	rest, ok := strings.CutSuffix(tmp, tempSuffix)
	if !ok || len(rest) < 2 || rest[0] != '.' {
		return "", false
	}
	i := strings.LastIndexByte(rest, '.')
	if i <= 1 || i == len(rest)-1 {
		return "", false
	}
	for _, c := range rest[i+1:] {
		if c < '0' || c > '9' {
			return "", false
		}
	}
	return rest[1:i], true
}

// Connections returns LocalConnections.
func (l *Local) Connections() int { return LocalConnections }

// String returns the folder's path.
func (l *Local) String() string { return l.dir }

// Put writes data to name atomically and durably: the temporary file is
// synced before the rename, so a crash leaves the earlier file or the new
// one, never a short one.
func (l *Local) Put(ctx context.Context, name string, data []byte) error {
	f, err := l.create(ctx, name, data)
	if err != nil {
		return err
	}
	// Sync before rename: an index must never reach disk before the files it lists.
	if err := f.sync(); err != nil {
		f.close()
		os.Remove(f.path)
		return fmt.Errorf("put %s: %w", name, err)
	}
	return l.place(f, name)
}

// PutDeferred writes data to name, leaving its durability to the next
// Sync (a file system sync: one for all the files put so far). Without
// one (not Linux) it is Put.
//
// A name the folder does not hold is created in place: no index names it
// before that Sync (Deferrer), so no reader looks for it while it is
// written, and a crash leaves at most a short file no set lists, as a
// renamed one could be. That saves the temporary name and the rename, a
// third of what a small file costs (BenchmarkLocalPuts): a first night of
// a thousand groups puts a thousand new sitemaps. A name the folder holds
// is replaced atomically, through a temporary file. A put that fails
// leaves a new name empty, for the caller to remove.
func (l *Local) PutDeferred(ctx context.Context, name string, data []byte) error {
	if !canSyncFS {
		return l.Put(ctx, name, data)
	}
	f, err := l.createNew(ctx, name, data)
	if err == nil {
		if err = f.close(); err != nil {
			return fmt.Errorf("put %s: %w", name, err) // left to the caller's cleanup: see write
		}
		return nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return err
	}
	if f, err = l.create(ctx, name, data); err != nil {
		return err
	}
	return l.place(f, name)
}

// PutAll writes every file to a temporary one, makes them all durable in
// one step (a file system sync, or a sync of each where there is none),
// renames them into place in order and syncs the folder: each name holds
// its earlier bytes or its new ones, whenever a crash comes.
func (l *Local) PutAll(ctx context.Context, files []File) (placed []string, err error) {
	tmps := make([]tempFile, len(files))
	defer func() {
		for _, tmp := range tmps[len(placed):] {
			if tmp.path != "" {
				os.Remove(tmp.path)
			}
		}
	}()
	// Written by a few at once: a file costs a handful of system calls,
	// and a thousand groups' batch would otherwise keep one core busy. A
	// few writers take the files in turn: a goroutine a file cost more
	// than the file's own system calls' entry.
	var g errgroup.Group
	var next atomic.Int64
	for range min(putAllWriters, len(files)) {
		g.Go(func() error {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(files) {
					return nil
				}
				var err error
				if tmps[i], err = l.writeTemp(ctx, files[i]); err != nil {
					return err
				}
			}
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if canSyncFS {
		if err := l.Sync(); err != nil {
			return nil, err
		}
	}
	for i, file := range files {
		if err := l.rename(tmps[i], file.Name); err != nil {
			return placed, fmt.Errorf("put %s: %w", file.Name, err)
		}
		placed = append(placed, file.Name)
	}
	return placed, l.syncDir()
}

// writeTemp writes file to a temporary file of PutAll's and closes it,
// synced where the file system cannot be synced as a whole.
func (l *Local) writeTemp(ctx context.Context, file File) (tempFile, error) {
	f, err := l.create(ctx, file.Name, file.Data)
	if err != nil {
		return tempFile{}, err
	}
	if !canSyncFS {
		err = f.sync()
	}
	if cerr := f.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return f, fmt.Errorf("put %s: %w", file.Name, err)
	}
	return f, nil
}

// putAllWriters is how many files PutAll writes at once.
const putAllWriters = 4

// create writes data to a new temporary file beside name, readable by all,
// and returns it open.
//
// It uses the system calls themselves, not *os.File: a grouped run puts a
// few thousand small files, and os.File spends half of a file's calls on
// what a file written once in one go does not need (registering with the
// poller, fstat, fcntl). BenchmarkLocalPuts on tmpfs: 36 µs a file before, 26 after.
func (l *Local) create(ctx context.Context, name string, data []byte) (_ tempFile, err error) {
	return l.write(ctx, name, data, true)
}

// createNew writes data to a new file name, readable by all, and returns it
// open; an error wrapping fs.ErrExist when the folder holds name.
func (l *Local) createNew(ctx context.Context, name string, data []byte) (_ tempFile, err error) {
	return l.write(ctx, name, data, false)
}

// write is create (temp) or createNew.
func (l *Local) write(ctx context.Context, name string, data []byte, temp bool) (_ tempFile, err error) {
	if err := ctx.Err(); err != nil {
		return tempFile{}, err
	}
	if name == "" || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") {
		return tempFile{}, fmt.Errorf("put %q: not a plain file name", name)
	}
	mode := uint32(0o600)
	if umaskKeeps644() {
		mode = 0o644 // readable from the start: no fchmod
	}
	var f tempFile
	if temp {
		f, err = createTemp(l.atFD(), l.dir, "."+name+".", tempSuffix, mode)
	} else {
		f, err = createExcl(l.atFD(), l.dir, name, mode)
	}
	runtime.KeepAlive(l)
	if err != nil {
		return tempFile{}, fmt.Errorf("put %s: %w", name, err)
	}
	defer func() {
		if err == nil {
			return
		}
		if temp {
			f.close()
			os.Remove(f.path)
			return
		}
		// Emptied, not removed: the name may be another's by now (a run
		// that took over the lock of one paused past it, and renamed its
		// file there), and the caller removes what it wrote once it has
		// made sure it holds the lock (publish.Tx.Abort).
		syscall.Ftruncate(f.fd, 0)
		f.close()
	}()
	if err = f.write(data); err != nil {
		return tempFile{}, fmt.Errorf("put %s: %w", name, err)
	}
	// Web servers read these files: the umask may have hidden them.
	if mode != 0o644 {
		if err = ignoringEINTR(func() error { return syscall.Fchmod(f.fd, 0o644) }); err != nil {
			return tempFile{}, fmt.Errorf("put %s: %w", f.path, err)
		}
	}
	return f, nil
}

// umaskKeeps644 reports whether the process's umask leaves a file created
// with mode 0644 readable by all, so that no fchmod is needed (one system
// call a file of the few thousand a grouped run writes). It reads the umask
// from /proc/self/status (Linux 4.7 and later): syscall.Umask would change
// it for the whole process while it looks. Unknown: false.
var umaskKeeps644 = sync.OnceValue(readUmaskKeeps644)

func readUmaskKeeps644() bool {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return false
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "Umask:"); ok {
			m, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32)
			return err == nil && m&0o644 == 0
		}
	}
	return false
}

// place closes the temporary file f and renames it to name.
func (l *Local) place(f tempFile, name string) error {
	err := f.close()
	if err == nil {
		err = l.rename(f, name)
	}
	if err != nil {
		os.Remove(f.path)
		return fmt.Errorf("put %s: %w", name, err)
	}
	return nil
}

// Get returns the content of name.
func (l *Local) Get(ctx context.Context, name string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, fi, err := l.openRegular(name)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", name, err)
	}
	defer f.Close()
	// Room for the file as it is, as os.ReadFile makes: a sitemap read
	// whole (--verify, IndexNow) would otherwise take about twice its size.
	data := bytes.NewBuffer(make([]byte, 0, int(fi.Size())+bytes.MinRead))
	if _, err := data.ReadFrom(f); err != nil {
		return nil, fmt.Errorf("get %s: %w", name, err)
	}
	return data.Bytes(), nil
}

// errNotRegular is the error of reading a name that is not a regular file.
var errNotRegular = errors.New("not a regular file")

// openRegular opens name for reading if it is a regular file. Opened
// non-blocking: a named pipe under a file's name (a manifest's, say) would
// otherwise block the open until a writer came, and the run with it.
func (l *Local) openRegular(name string) (*os.File, fs.FileInfo, error) {
	path := filepath.Join(l.dir, name)
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w (%s)", errNotRegular, fi.Mode().Type())}
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// List returns the names of the regular files in the folder.
func (l *Local) List(ctx context.Context) ([]string, error) {
	ents, err := os.ReadDir(l.dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// ListInfo returns the regular files with their sizes.
func (l *Local) ListInfo(ctx context.Context) ([]Info, error) {
	ents, err := os.ReadDir(l.dir)
	if err != nil {
		return nil, err
	}
	var infos []Info
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		fi, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed since ReadDir
		}
		if err != nil {
			return nil, err
		}
		infos = append(infos, Info{Name: e.Name(), Size: fi.Size()})
	}
	return infos, nil
}

// Tail returns the last n bytes of name (all of it when shorter).
func (l *Local) Tail(ctx context.Context, name string, n int) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if name == "" || strings.ContainsAny(name, `/\`) {
		return nil, fmt.Errorf("tail %q: not a plain file name", name)
	}
	f, fi, err := l.openRegular(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	off := max(fi.Size()-int64(n), 0)
	buf := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil {
		return nil, fmt.Errorf("tail %s: %w", name, err)
	}
	return buf, nil
}

// Delete removes name from the folder.
func (l *Local) Delete(ctx context.Context, name string) error {
	err := os.Remove(filepath.Join(l.dir, name))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete %s: %w", name, err)
	}
	return nil
}

// Sync makes what was put so far durable: the bytes of PutDeferred's files
// (a sync of the whole file system, one call for any number of files) and
// the folder's entries, so renames done so far survive a crash.
func (l *Local) Sync() error {
	if canSyncFS {
		d, err := os.Open(l.dir)
		if err != nil {
			return err
		}
		defer d.Close()
		if err := syncFS(d); err != nil {
			return fmt.Errorf("sync %s: %w", l.dir, err)
		}
		return d.Sync()
	}
	return l.syncDir()
}

// syncDir flushes the folder's entries.
func (l *Local) syncDir() error {
	d, err := os.Open(l.dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
