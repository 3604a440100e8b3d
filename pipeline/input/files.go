package input

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"
)

// File is one input to read, found from one argument: the argument itself,
// or a file of the folder or glob it names.
type File struct {
	Path    string
	Arg     int  // index of the argument it was found from
	Listed  bool // found in a folder or by a glob, not named directly
	Regular bool // a regular file or an object, which can be opened and read again

	format *Format
	place  place           // where it lives (see at)
	ent    entry           // as Stat or List found it
	ctx    context.Context // the run's: it bounds every read of a remote input
	// held is the open handle of an input that is not a regular file,
	// kept from the probe to the read (see Probe).
	held *heldInput
	got  *fetched // what the readers of a remote input fetched, once closed
}

// fetched counts the bytes and requests of an input's closed readers.
type fetched struct{ bytes, requests atomic.Int64 }

// Format returns the name of the file's format: "CSV", "Parquet", "Arrow".
func (f *File) Format() string { return f.format.Name }

// Name returns the name the file goes by in messages and rejects: its path,
// or "stdin" for "-".
func (f *File) Name() string {
	if f.Path == "-" {
		return "stdin"
	}
	return f.Path
}

// at returns the place f lives in; "-" reads stdin, which is given only
// when the inputs are probed and opened.
func (f *File) at(stdin io.Reader) place {
	if _, ok := f.place.(stdinPlace); ok {
		return stdinPlace{stdin}
	}
	return f.place
}

// count adds what the reader r fetched, when it counts.
func (f *File) count(r any) {
	if c, ok := r.(counter); ok {
		b, n := c.fetched()
		f.got.bytes.Add(b)
		f.got.requests.Add(n)
	}
}

// describe names f and the argument it came from, for messages.
func (f *File) describe(args []string) string {
	if f.Listed {
		return fmt.Sprintf("%q (found by argument %d, %q)", f.Path, f.Arg+1, args[f.Arg])
	}
	return fmt.Sprintf("%q (argument %d)", f.Path, f.Arg+1)
}
