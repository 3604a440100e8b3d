// Package sink puts a run's files where they are served from: a local folder
// now, an object store later. Every Put is atomic: a reader sees the whole
// file or the previous one, never a part.
package sink

import (
	"context"
	"errors"
	"fmt"
	"regexp"
)

// Sink is a flat namespace of files.
type Sink interface {
	// Put stores data under name, replacing any earlier file atomically.
	Put(ctx context.Context, name string, data []byte) error
	// List returns the names of the files present.
	List(ctx context.Context) ([]string, error)
	// Delete removes the named file; a missing file is not an error.
	Delete(ctx context.Context, name string) error
	// String describes the destination for people.
	String() string
}

// Syncer is a Sink that can make the files put so far durable, so that a
// file naming them is never durable before they are.
type Syncer interface {
	Sync() error
}

// Owned reports whether name looks like a file a run with this stem writes
// and may therefore delete: shards, intermediate indexes and temporary files.
// The root index and the robots lines have fixed names and are never pruned.
func Owned(stem string) *regexp.Regexp {
	q := regexp.QuoteMeta(stem)
	return regexp.MustCompile(`^(?:` + q + `-[0-9]{6,}-[0-9a-f]{10}\.xml\.gz|` +
		q + `-index-[0-9]{4,}-[0-9a-f]{10}\.xml|\.` + q + `[-.][^/]*\.tmp)$`)
}

// Prune deletes the files owned by stem that keep does not hold. It is the
// last step of a publish, after the new root index is in place.
func Prune(ctx context.Context, s Sink, stem string, keep map[string]bool) (deleted []string, err error) {
	names, err := s.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", s, err)
	}
	owned := Owned(stem)
	var errs []error
	for _, n := range names {
		if keep[n] || !owned.MatchString(n) {
			continue
		}
		if err := s.Delete(ctx, n); err != nil {
			errs = append(errs, err)
			continue
		}
		deleted = append(deleted, n)
	}
	return deleted, errors.Join(errs...)
}
