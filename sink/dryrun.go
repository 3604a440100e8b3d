package sink

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// ErrNotKept reports a Get of a file a DryRun put but did not keep.
var ErrNotKept = errors.New("written by the dry run but not kept")

// DryRun is a Store that reads from another but writes nothing: it records
// the files it would put and delete. Wrapping the destination in it is the
// whole of a dry run; the code that publishes does not know.
type DryRun struct {
	s Store

	mu      sync.Mutex
	puts    []string
	deletes []string

	keep     func(name string) bool // nil: keep nothing
	room     int64                  // bytes still to keep
	kept     map[string][]byte
	overflow map[string]bool // put, kept by keep, but over the room
}

// Keep makes the DryRun hold the data of the files it puts whose names
// match, up to limit bytes in all, so that Get reads them back as a real
// run would (what a change would tell others is then known without
// writing). A file beyond the limit is not held: Get of it is an error
// wrapping ErrNotKept.
func (d *DryRun) Keep(match func(name string) bool, limit int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.keep, d.room = match, limit
	d.kept, d.overflow = map[string][]byte{}, map[string]bool{}
}

// NewDryRun returns a DryRun over s.
func NewDryRun(s Store) *DryRun { return &DryRun{s: s} }

// Put records name; nothing is written.
func (d *DryRun) Put(ctx context.Context, name string, data []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.puts = append(d.puts, name)
	if d.keep != nil && d.keep(name) {
		if int64(len(data)) <= d.room {
			d.room -= int64(len(data)) - int64(len(d.kept[name]))
			d.kept[name] = append([]byte(nil), data...) // the caller reuses its buffer
		} else {
			d.overflow[name] = true
		}
	}
	return nil
}

// Get reads from the wrapped store, or what Keep held.
func (d *DryRun) Get(ctx context.Context, name string) ([]byte, error) {
	d.mu.Lock()
	data, kept := d.kept[name]
	over := d.overflow[name]
	d.mu.Unlock()
	if kept {
		return append([]byte(nil), data...), nil
	}
	if over {
		return nil, fmt.Errorf("%s: %w", name, ErrNotKept)
	}
	return d.s.Get(ctx, name)
}

// List lists the wrapped store.
func (d *DryRun) List(ctx context.Context) ([]string, error) { return d.s.List(ctx) }

// ListInfo lists the wrapped store with sizes; a store that cannot
// tells no sizes (-1), so nothing of it is trusted.
func (d *DryRun) ListInfo(ctx context.Context) ([]Info, error) {
	if st, ok := d.s.(Stater); ok {
		return st.ListInfo(ctx)
	}
	names, err := d.s.List(ctx)
	infos := make([]Info, len(names))
	for i, n := range names {
		infos[i] = Info{Name: n, Size: -1}
	}
	return infos, err
}

// Tail reads from the wrapped store, if it can.
func (d *DryRun) Tail(ctx context.Context, name string, n int) ([]byte, error) {
	if t, ok := d.s.(Tailer); ok {
		return t.Tail(ctx, name, n)
	}
	return nil, fmt.Errorf("tail %s: %w", name, errors.ErrUnsupported)
}

// Delete records name; nothing is deleted. Deleting a name this DryRun put
// takes the put back instead: together they would have changed nothing.
func (d *DryRun) Delete(ctx context.Context, name string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := len(d.puts) - 1; i >= 0; i-- {
		if d.puts[i] == name {
			d.puts = append(d.puts[:i], d.puts[i+1:]...)
			d.room += int64(len(d.kept[name]))
			delete(d.kept, name)
			delete(d.overflow, name)
			return nil
		}
	}
	d.deletes = append(d.deletes, name)
	return nil
}

// Connections is the wrapped store's.
func (d *DryRun) Connections() int { return d.s.Connections() }

// String describes the wrapped store.
func (d *DryRun) String() string { return d.s.String() + " (dry run)" }

// Puts returns the names put so far, in order.
func (d *DryRun) Puts() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string{}, d.puts...)
}

// Deletes returns the names deleted so far, in order.
func (d *DryRun) Deletes() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string{}, d.deletes...)
}
