package input

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// localPlace is the local file system: paths, folders and globs.
type localPlace struct{}

// openFile opens a local file; tests replace it to count opens.
var openFile = os.Open

func localEntry(name string, fi os.FileInfo) entry {
	return entry{name: name, dir: fi.IsDir(), size: fi.Size(), regular: fi.Mode().IsRegular(), sys: fi}
}

// Stat follows links: /dev/stdin and /dev/fd/N name what they open.
func (localPlace) Stat(_ context.Context, name string) (entry, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return entry{}, err
	}
	return localEntry(name, fi), nil
}

func (p localPlace) List(ctx context.Context, folder string, keep func(string) bool) ([]entry, error) {
	var found []string
	err := filepath.WalkDir(folder, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path != folder && hiddenPart(d.Name()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() && keep(path) {
			found = append(found, path)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", folder, err)
	}
	sort.Strings(found)
	ents := make([]entry, len(found))
	for i, path := range found {
		if ents[i], err = p.Stat(ctx, path); err != nil {
			return nil, err
		}
	}
	return ents, nil
}

// hiddenPart reports a name that Spark, Hive and friends write beside their
// part files and that is not data: _SUCCESS, _delta_log, .part-0.crc, ...
func hiddenPart(name string) bool {
	return strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".")
}

func (localPlace) Glob(_ context.Context, pattern string) ([]entry, error) {
	matches, err := filepath.Glob(pattern)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", pattern, err)
	}
	sort.Strings(matches)
	var ents []entry
	for _, m := range matches {
		if fi, err := os.Stat(m); err == nil && !fi.IsDir() {
			ents = append(ents, localEntry(m, fi))
		}
	}
	return ents, nil
}

func (localPlace) Success(_ context.Context, folder string) (bool, error) {
	_, err := os.Stat(filepath.Join(folder, successMarker))
	return err == nil, nil
}

func (localPlace) Open(_ context.Context, e entry, off int64) (io.ReadCloser, error) {
	f, err := openFile(e.name)
	if err != nil {
		return nil, err
	}
	if off != 0 {
		if _, err := f.Seek(off, io.SeekStart); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

func (localPlace) ReaderAt(_ context.Context, e entry) (readerAt, error) {
	f, err := openFile(e.name)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return localFile{f, fi.Size()}, nil
}

// localFile is a local file read by position.
type localFile struct {
	*os.File
	size int64
}

func (f localFile) Size() int64 { return f.size }
