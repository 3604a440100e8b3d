package input

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sitemapgen/sitemapgen/pipeline/input/s3obj"
)

// File is one file to read, found from one argument: the argument itself,
// or a file of the folder or glob it names.
type File struct {
	Path    string
	Arg     int  // index of the argument it was found from
	Listed  bool // found in a folder or by a glob, not named directly
	Regular bool // a regular file, which can be opened and read again

	format *Format
	info   os.FileInfo // from Expand's stat; nil for "-"
	// held is the open handle of an input that is not a regular file,
	// kept from the probe to the read (see Probe).
	held *heldInput
	// obj is the object an s3:// argument stands for, nil for a local file.
	obj *object
}

// Format returns the name of the file's format: "CSV", "Parquet", "Arrow".
func (f *File) Format() string { return f.format.Name }

// hasGlob reports whether name holds a filepath.Match meta character.
func hasGlob(name string) bool { return strings.ContainsAny(name, "*?[") }

// hiddenPart reports a name that Spark, Hive and friends write beside their
// part files and that is not data: _SUCCESS, _delta_log, .part-0.crc, ...
func hiddenPart(name string) bool {
	return strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".")
}

// Expand checks the arguments and lists the files to read, failing fast,
// before anything is written, on inputs that cannot be read. "-" is stdin.
// A folder stands for the Parquet and Arrow files below it (Hive key=value/
// sub-folders included, hidden and _-prefixed names skipped), a pattern with
// * ? or [ for the files it matches; both in lexical path order, so output
// is deterministic. An s3:// argument stands for the objects rem lists
// (see s3obj.Store.List), read with ctx. A file reached twice (named
// twice, named and found in a folder or by a glob, or through a link) is an
// error wrapping ErrRepeatedInput: its rows would be published twice.
func ExpandRemote(ctx context.Context, args []string, rem *Remote) ([]File, error) {
	stdin := 0
	var files []File
	for arg, n := range args {
		if n == "-" {
			if stdin++; stdin > 1 {
				return nil, fmt.Errorf("%w: '-' (stdin)", ErrRepeatedInput)
			}
			files = append(files, File{Path: n, Arg: arg, format: formatOf(n)})
			continue
		}
		if s3obj.IsURL(n) {
			objs, err := rem.expandObjects(ctx, n, arg)
			if err != nil {
				return nil, err
			}
			files = append(files, objs...)
			continue
		}
		// Stat follows links: /dev/stdin and /dev/fd/N name what they open.
		fi, err := os.Stat(n)
		if err != nil && hasGlob(n) {
			matches, gerr := filepath.Glob(n)
			if gerr != nil {
				return nil, fmt.Errorf("%s: %w", n, gerr)
			}
			sort.Strings(matches)
			found := 0
			for _, m := range matches {
				mi, err := os.Stat(m)
				if err != nil || mi.IsDir() {
					continue
				}
				files = append(files, File{Path: m, format: formatOf(m), Arg: arg, Listed: true, Regular: mi.Mode().IsRegular(), info: mi})
				found++
			}
			if found == 0 {
				return nil, fmt.Errorf("%s: no file matches the pattern", n)
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			files = append(files, File{Path: n, format: formatOf(n), Arg: arg, Regular: fi.Mode().IsRegular(), info: fi})
			continue
		}
		if err := rem.checkSuccess(n); err != nil {
			return nil, err
		}
		var found []string
		err = filepath.WalkDir(n, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if p != n && hiddenPart(d.Name()) {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.IsDir() && formatOf(p).Open != nil {
				found = append(found, p)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s: is a folder without .parquet or Arrow files; name the files to read", n)
		}
		sort.Strings(found)
		for _, p := range found {
			fi, err := os.Stat(p)
			if err != nil {
				return nil, err
			}
			files = append(files, File{Path: p, format: formatOf(p), Arg: arg, Listed: true, Regular: fi.Mode().IsRegular(), info: fi})
		}
	}
	if err := checkRepeats(args, files); err != nil {
		return nil, err
	}
	for _, f := range files {
		if f.format.Open != nil && !f.Regular {
			// Parquet and Arrow files are read by position; a pipe is not.
			return nil, fmt.Errorf("%s: a %s input must be a regular file (not a pipe or device); write it to a file first", f.Path, f.format.Name)
		}
	}
	return files, nil
}

// ErrRepeatedInput reports an input file that the arguments name more than
// once: reading it twice would publish each of its URLs twice.
var ErrRepeatedInput = errors.New("input given more than once")

// checkRepeats returns an error naming the first file of files that is also
// an earlier one: the same cleaned absolute path, or the same file by
// os.SameFile (a symbolic or hard link, /dev/stdin and /dev/fd/0, ...).
func checkRepeats(args []string, files []File) error {
	type kind struct {
		mode os.FileMode
		size int64
	}
	paths := make(map[string]int, len(files))
	alike := make(map[kind][]int, len(files)) // SameFile candidates: same type and size
	for i, f := range files {
		if f.info == nil { // "-": checked on its own
			continue
		}
		prev := -1
		if abs, err := filepath.Abs(f.Path); err == nil {
			if j, ok := paths[abs]; ok {
				prev = j
			} else {
				paths[abs] = i
			}
		}
		k := kind{f.info.Mode().Type(), f.info.Size()}
		for _, j := range alike[k] {
			if prev >= 0 {
				break
			}
			if os.SameFile(files[j].info, f.info) {
				prev = j
			}
		}
		if prev >= 0 {
			return fmt.Errorf("%w: %s is the same file as %s; name each file once", ErrRepeatedInput, files[i].describe(args), files[prev].describe(args))
		}
		alike[k] = append(alike[k], i)
	}
	return nil
}

// describe names f and the argument it came from, for messages.
func (f *File) describe(args []string) string {
	if f.Listed {
		return fmt.Sprintf("%q (found by argument %d, %q)", f.Path, f.Arg+1, args[f.Arg])
	}
	return fmt.Sprintf("%q (argument %d)", f.Path, f.Arg+1)
}
