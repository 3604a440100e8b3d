// Package sink puts a run's files where they are served from: a local folder
// or an S3 bucket. Every Put is atomic: a reader sees the whole file or the
// previous one, never a part.
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
	// Get returns the content of name; an error wrapping fs.ErrNotExist
	// when there is no such file.
	Get(ctx context.Context, name string) ([]byte, error)
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

// Aborter is a sink that can hold incomplete uploads (S3 multipart uploads
// of a run that was killed): invisible to readers, but stored and billed.
type Aborter interface {
	// AbortIncomplete aborts the incomplete uploads of the names owned
	// accepts and returns those names.
	AbortIncomplete(ctx context.Context, owned func(name string) bool) (aborted []string, err error)
}

// BatchDeleter is a sink that deletes many files in few requests.
type BatchDeleter interface {
	// DeleteAll removes the named files and returns those it removed.
	DeleteAll(ctx context.Context, names []string) (deleted []string, err error)
}

// PrunePlan returns the files owned by stem that keep does not hold: what
// Prune would delete.
func PrunePlan(ctx context.Context, s Sink, stem string, keep map[string]bool) ([]string, error) {
	names, err := s.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", s, err)
	}
	owned := Owned(stem)
	var plan []string
	for _, n := range names {
		if !keep[n] && owned.MatchString(n) {
			plan = append(plan, n)
		}
	}
	return plan, nil
}

// Prune deletes the files owned by stem that keep does not hold, and aborts
// the incomplete uploads of owned names. It is the last step of a publish,
// after the new root index is in place.
func Prune(ctx context.Context, s Sink, stem string, keep map[string]bool) (deleted []string, err error) {
	plan, err := PrunePlan(ctx, s, stem, keep)
	if err != nil {
		return nil, err
	}
	var errs []error
	if bd, ok := s.(BatchDeleter); ok {
		deleted, err = bd.DeleteAll(ctx, plan)
		errs = append(errs, err)
	} else {
		for _, n := range plan {
			if err := s.Delete(ctx, n); err != nil {
				errs = append(errs, err)
				continue
			}
			deleted = append(deleted, n)
		}
	}
	if a, ok := s.(Aborter); ok {
		owned := Owned(stem)
		if _, err := a.AbortIncomplete(ctx, owned.MatchString); err != nil {
			errs = append(errs, err)
		}
	}
	return deleted, errors.Join(errs...)
}
