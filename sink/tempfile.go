package sink

import (
	"errors"
	"math/rand/v2"
	"os"
	"strconv"
	"syscall"
)

// tempFile is a file create wrote and holds open: its descriptor and path.
type tempFile struct {
	fd   int
	path string
}

// createTemp creates a new file in dir named prefix, random decimal digits
// and suffix, as os.CreateTemp names its files (sink.TempOf reads them
// back), open for writing, with mode (less the umask).
func createTemp(dir, prefix, suffix string, mode uint32) (tempFile, error) {
	for try := 0; ; try++ {
		path := dir + string(os.PathSeparator) + prefix + strconv.FormatUint(uint64(rand.Uint32()), 10) + suffix
		var fd int
		err := ignoringEINTR(func() (err error) {
			fd, err = syscall.Open(path, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_CLOEXEC, mode)
			return err
		})
		if err == nil {
			return tempFile{fd: fd, path: path}, nil
		}
		if !errors.Is(err, syscall.EEXIST) || try == 10000 {
			return tempFile{}, &os.PathError{Op: "createtemp", Path: path, Err: err}
		}
	}
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

// rename is os.Rename without its Lstat of newpath (which refuses to
// replace a folder; rename(2) refuses that itself): one call a file.
func rename(oldpath, newpath string) error {
	if err := ignoringEINTR(func() error { return syscall.Rename(oldpath, newpath) }); err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
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
