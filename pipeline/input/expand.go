package input

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sitemapgen/sitemapgen/pipeline/input/s3obj"
)

// Expand is ExpandRemote without s3:// arguments' options: the SDK's
// default configuration, no _SUCCESS required.
func Expand(args []string) ([]File, error) {
	return ExpandRemote(context.Background(), args, nil)
}

// ExpandRemote checks the arguments and lists the files to read, failing
// fast, before anything is written, on inputs that cannot be read. "-" is
// stdin. A folder (an s3:// prefix) stands for the Parquet and Arrow files
// below it (Hive key=value/ sub-folders included, hidden and _-prefixed
// names skipped; its CSV and text files skipped with a warning, and listed
// by rem.SkippedFiles), a pattern with * ? or [ for the files it
// matches; both in lexical order, so output is deterministic, and without
// their zero-byte Parquet and Arrow files (skipped with a warning). s3://
// arguments are found and read as rem says, with ctx. A file reached twice
// (named twice, named and found in a folder or by a glob, or through a
// link) is an error wrapping ErrRepeatedInput: its rows would be published
// twice.
func ExpandRemote(ctx context.Context, args []string, rem *Remote) ([]File, error) {
	if rem == nil {
		rem = &Remote{}
	}
	stdin := 0
	var files []File
	for i, arg := range args {
		if arg == "-" {
			if stdin++; stdin > 1 {
				return nil, fmt.Errorf("%w: '-' (stdin)", ErrRepeatedInput)
			}
		}
		pl, err := rem.placeOf(ctx, arg)
		if err != nil {
			return nil, err
		}
		found, err := rem.expand(ctx, pl, arg)
		if err != nil {
			return nil, err
		}
		for _, e := range found {
			files = append(files, File{Path: e.name, Arg: i, Listed: e.name != arg, Regular: e.regular,
				format: formatOf(e.name), place: pl, ent: e, ctx: ctx, got: new(fetched)})
		}
	}
	if err := checkRepeats(args, files); err != nil {
		return nil, err
	}
	for _, f := range files {
		if f.format.OpenAt != nil && !f.Regular {
			// Parquet and Arrow files are read by position; a pipe is not.
			return nil, fmt.Errorf("%s: a %s input must be a regular file (not a pipe or device); write it to a file first", f.Path, f.format.Name)
		}
	}
	return files, nil
}

// expand returns the entries of the files arg stands for in pl.
func (r *Remote) expand(ctx context.Context, pl place, arg string) ([]entry, error) {
	e, err := pl.Stat(ctx, arg)
	switch {
	case err != nil && hasGlob(arg):
		return r.glob(ctx, pl, arg)
	case err != nil:
		return nil, err
	case !e.dir:
		return []entry{e}, nil
	}
	var streams []string // CSV and text files: not what a folder stands for
	ents, err := pl.List(ctx, e.name, func(name string) bool {
		if formatOf(name).OpenAt != nil {
			return true
		}
		if streamInput(name) {
			streams = append(streams, name)
		}
		return false
	})
	if err != nil {
		return nil, err
	}
	if err := r.checkSuccess(ctx, pl, e.name); err != nil {
		return nil, err
	}
	if len(ents) == 0 {
		return nil, &noInput{e.name, "is a folder without .parquet or Arrow files; name the files to read"}
	}
	if len(streams) > 0 {
		r.skipStreams(e.name, streams)
	}
	return r.skipEmpty(ents), nil
}

// streamInput reports a name that would be read as CSV or text if it were
// named: .csv, .txt, either gzipped.
func streamInput(name string) bool {
	n := strings.TrimSuffix(strings.ToLower(name), ".gz")
	return strings.HasSuffix(n, ".csv") || strings.HasSuffix(n, ".txt")
}

// skipStreams warns of the CSV and text files of folder (local paths, or
// object keys below an s3:// prefix) that the run will not read: a folder
// stands for its Parquet and Arrow files. The warning names them relative to
// the folder; SkippedFiles returns them.
func (r *Remote) skipStreams(folder string, names []string) {
	rel := make([]string, len(names))
	full := make([]string, len(names))
	bucket, prefix, err := s3obj.ParseURL(folder)
	remote := err == nil && strings.HasPrefix(folder, "s3://")
	for i, n := range names {
		rel[i], full[i] = n, n
		if remote {
			rel[i], full[i] = strings.TrimPrefix(n, prefix), "s3://"+bucket+"/"+n
		} else if p, err := filepath.Rel(folder, n); err == nil {
			rel[i] = p
		}
	}
	const show = 5
	list := strings.Join(rel[:min(show, len(rel))], ", ")
	if len(rel) > show {
		list += fmt.Sprintf(", … (%d more)", len(rel)-show)
	}
	r.log().Warn("skipped the CSV and text files of a folder: a folder stands for its Parquet and Arrow files; name the files to read them (a glob for each kind)",
		"folder", folder, "skipped", len(names), "files", list)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.skipped = append(r.skipped, full...)
}

// SkippedFiles returns the CSV and text files in folders (and s3://
// prefixes) that ExpandRemote skipped with a warning: their paths, or
// s3:// URLs. r may be nil.
func (r *Remote) SkippedFiles() []string {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.skipped)
}

// skipEmpty returns the listed entries but the zero-byte files of a format
// read by position, with a warning for each: writers leave them for empty
// partitions, and they hold not even a footer. A folder of nothing else
// gives no file, and the run fails as for one of 0-row files: no data rows.
func (r *Remote) skipEmpty(ents []entry) []entry {
	kept := ents[:0]
	for _, e := range ents {
		if e.size == 0 && formatOf(e.name).OpenAt != nil {
			r.log().Warn("skipped an empty part file (0 bytes; writers leave them for empty partitions)", "file", e.name)
			continue
		}
		kept = append(kept, e)
	}
	return kept
}

// glob returns the entries of the files pattern matches in pl.
func (r *Remote) glob(ctx context.Context, pl place, pattern string) ([]entry, error) {
	ents, err := pl.Glob(ctx, pattern)
	if err != nil {
		return nil, err
	}
	if err := r.checkSuccess(ctx, pl, globFolder(pattern)); err != nil {
		return nil, err
	}
	if len(ents) == 0 {
		return nil, &noInput{pattern, "no file matches the pattern"}
	}
	return r.skipEmpty(ents), nil
}

// ErrIncomplete reports a folder without the _SUCCESS marker when
// Remote.RequireSuccess asks for one.
var ErrIncomplete = errors.New("has no _SUCCESS marker (--require-success): the export is not complete")

// checkSuccess refuses folder when r requires a _SUCCESS marker and
// folder has none.
func (r *Remote) checkSuccess(ctx context.Context, pl place, folder string) error {
	if !r.RequireSuccess {
		return nil
	}
	ok, err := pl.Success(ctx, folder)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%s: %w", folder, ErrIncomplete)
	}
	return nil
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
		info, ok := f.ent.sys.(os.FileInfo)
		if !ok { // "-" is checked on its own; objects are named once by their listing
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
		k := kind{info.Mode().Type(), info.Size()}
		for _, j := range alike[k] {
			if prev >= 0 {
				break
			}
			if os.SameFile(files[j].ent.sys.(os.FileInfo), info) {
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
