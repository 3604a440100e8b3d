package sink

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// tempFile is a file create wrote and holds open: its descriptor, its
// name in its folder and its path.
type tempFile struct {
	fd   int
	name string
	path string
}

// createTemp creates a new file in dir (open as at) named prefix, random
// decimal digits and suffix, as os.CreateTemp names its files (sink.TempOf
// reads them back), open for writing, with mode (less the umask).
func createTemp(at int, dir, prefix, suffix string, mode uint32) (tempFile, error) {
	for try := 0; ; try++ {
		f, err := createExcl(at, dir, prefix+strconv.FormatUint(uint64(rand.Uint32()), 10)+suffix, mode)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EEXIST) || try == 10000 {
			err.(*os.PathError).Op = "createtemp"
			return tempFile{}, err
		}
	}
}

// createExcl creates the file name in dir (open as at), which must not
// exist, open for writing, with mode (less the umask).
func createExcl(at int, dir, name string, mode uint32) (tempFile, error) {
	path := dir + string(os.PathSeparator) + name
	var fd int
	err := ignoringEINTR(func() (err error) {
		fd, err = unix.Openat(at, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, mode)
		return err
	})
	if err != nil {
		return tempFile{}, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return tempFile{fd: fd, name: name, path: path}, nil
}

// write writes all of data.
func (f tempFile) write(data []byte) error {
	for len(data) > 0 {
		n, err := syscall.Write(f.fd, data)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return &os.PathError{Op: "write", Path: f.path, Err: err}
		}
		if n == 0 {
			return &os.PathError{Op: "write", Path: f.path, Err: syscall.EIO}
		}
		data = data[n:]
	}
	return nil
}

func (f tempFile) sync() error {
	if err := ignoringEINTR(func() error { return syscall.Fsync(f.fd) }); err != nil {
		return &os.PathError{Op: "sync", Path: f.path, Err: err}
	}
	return nil
}

func (f tempFile) close() error {
	if err := syscall.Close(f.fd); err != nil {
		return &os.PathError{Op: "close", Path: f.path, Err: err}
	}
	return nil
}

// rename renames the temporary file f to name in l's folder: os.Rename
// without its Lstat of the new path (which refuses to replace a folder;
// rename(2) refuses that itself), and relative to the open folder.
func (l *Local) rename(f tempFile, name string) error {
	err := ignoringEINTR(func() error { return unix.Renameat(l.atFD(), f.name, l.atFD(), name) })
	runtime.KeepAlive(l)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: f.path, New: filepath.Join(l.dir, name), Err: err}
	}
	return nil
}

func ignoringEINTR(fn func() error) error {
	for {
		if err := fn(); !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
