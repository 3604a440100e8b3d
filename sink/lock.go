package sink

import (
	"context"
	"errors"
	"time"
)

// ErrLocked reports a lock that another run holds.
var ErrLocked = errors.New("another run holds the destination")

// Locker is a Store on which one run at a time can hold a named lock, so
// that runs overlapping on one destination never interleave their writes.
type Locker interface {
	// Lock takes the lock name for owner (a description for people: host,
	// process, start time), or fails with an error wrapping ErrLocked that
	// says who holds it. A store that cannot see a holder die (S3) lets a
	// lock expire ttl after its last renewal; the Lock renews itself while
	// held.
	Lock(ctx context.Context, name, owner string, ttl time.Duration) (Lock, error)
}

// Lock is a held lock.
type Lock interface {
	// Err returns nil while the lock is surely held, and the reason once it
	// may not be (a renewal failed, another run took it over).
	Err() error
	// Release gives the lock up.
	Release(ctx context.Context) error
}
