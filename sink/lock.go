package sink

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
)

// ErrLocked reports a lock that another run holds.
var ErrLocked = errors.New("another run holds the destination")

// Locker is a Store on which one run at a time can hold a named lock, so
// that runs overlapping on one destination never interleave their writes.
type Locker interface {
	// Lock takes the lock name for who (its Owner, a description for
	// people: host, process; and Groups), or fails with a *LockedError that
	// says who holds it. Each Lock draws a random token that it stores in
	// the lock, with who's Owner and Groups: a holder is known by it, never
	// by the owner text, which two runs in containers (PID 1 on the same
	// host name) share. A store that cannot see a holder die (S3) lets a
	// lock expire ttl after its last renewal; the Lock renews itself while
	// held.
	Lock(ctx context.Context, name string, who Holder, ttl time.Duration) (Lock, error)
	// Held returns a *LockedError naming the holder of the lock name when
	// a live run holds it, and nil when none does (no lock, or a stale
	// one, which it leaves). It takes nothing: a run that holds a lock of
	// its own looks with it at a lock whose holder may publish the same
	// files (a grouped run's groups and their sets run alone).
	Held(ctx context.Context, name string) error
	// Unlock removes the lock name by hand and returns what it recorded of
	// its holder. Without force it removes only a stale lock (expired, or
	// held by no process) and refuses a live one with a *LockedError;
	// with force it removes a live one too, for an operator who knows
	// the holder is dead. No lock: an error wrapping fs.ErrNotExist.
	Unlock(ctx context.Context, name string, force bool) (Holder, error)
}

var (
	_ Locker = (*Local)(nil)
	_ Locker = (*S3)(nil)
)

// Lock is a held lock.
type Lock interface {
	// Err returns nil while the lock is surely held, and the reason once it
	// may not be (a renewal failed, another run took it over).
	Err() error
	// Renew confirms now that the lock is held (S3: renews it with a
	// conditional write), else fails and Err reports it lost. A publish
	// calls it just before the switch.
	Renew(ctx context.Context) error
	// Release gives the lock up.
	Release(ctx context.Context) error
	// Holder returns what the lock records of this run.
	Holder() Holder
}

// Holder is what a lock records of the run holding it. The times are the
// holder's clock when it wrote them, not the run's --now.
type Holder struct {
	Owner    string    `json:"owner"`             // for people: "sitemapgen pid 4121 on etl-3"
	Token    string    `json:"token,omitempty"`   // random, drawn by each Lock: no other run has it
	Acquired time.Time `json:"acquired,omitzero"` // when the lock was taken
	Renewed  time.Time `json:"renewed,omitzero"`  // when it was last written (S3)
	Expires  time.Time `json:"expires,omitzero"`  // S3: when it expires unless renewed; zero: when its process ends
	// Groups marks the lock of a grouped run whose groups' sets, NAME-GROUP,
	// share the destination: a run of one of those sets alone (its own
	// lock, .NAME-GROUP.lock) must not overlap it.
	Groups bool `json:"groups,omitempty"`
}

// Run returns the first 8 digits of the token: enough to tell runs apart in
// a message, as a short commit hash is.
func (h Holder) Run() string { return h.Token[:min(8, len(h.Token))] }

// String says who holds the lock, since when and until when.
func (h Holder) String() string {
	var b strings.Builder
	b.WriteString(printable(h.Owner, 200))
	if h.Owner == "" {
		b.WriteString("an unnamed run")
	}
	if h.Token != "" {
		fmt.Fprintf(&b, " (run %s)", printable(h.Run(), 8))
	}
	if h.Groups {
		b.WriteString(", publishing groups")
	}
	if !h.Acquired.IsZero() {
		b.WriteString(" since " + stamp(h.Acquired))
	}
	if !h.Renewed.IsZero() && stamp(h.Renewed) != stamp(h.Acquired) {
		b.WriteString(", last renewed " + stamp(h.Renewed))
	}
	return b.String()
}

// parseHolder reads a lock's content: the JSON of Holder. A lock that
// does not parse, or has no owner, fails.
func parseHolder(raw []byte) (Holder, error) {
	var h Holder
	if err := json.Unmarshal(raw, &h); err != nil {
		return Holder{}, err
	}
	if h.Owner == "" && h.Token == "" {
		return Holder{}, errors.New("no owner")
	}
	return h, nil
}

// newToken returns 16 random bytes in hex.
func newToken() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand since Go 1.24)
	return hex.EncodeToString(b[:])
}

// LockedError reports a lock that another run holds, or held a moment ago.
// It wraps ErrLocked.
type LockedError struct {
	Lock   string // where the lock is: a path or an s3:// URL
	Holder Holder
	Expiry bool   // the lock expires (S3) rather than ending with its holder's process (a folder)
	Note   string // what happened, when no holder could be read
}

func (e *LockedError) Error() string {
	if e.Note != "" {
		return fmt.Sprintf("%v: %s %s", ErrLocked, e.Lock, e.Note)
	}
	msg := fmt.Sprintf("%v: %s is held by %v", ErrLocked, e.Lock, e.Holder)
	switch {
	case !e.Expiry:
		return msg + "; it ends when that process exits"
	case e.Holder.Expires.IsZero():
		return msg
	case time.Now().After(e.Holder.Expires):
		return msg + "; it expired at " + stamp(e.Holder.Expires)
	}
	return msg + "; it expires at " + stamp(e.Holder.Expires) + " unless that run renews it"
}

func (e *LockedError) Unwrap() error { return ErrLocked }

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// printable returns s with every control or invalid character replaced,
// cut to at most n bytes: a lock is read from a store others can write,
// and its text goes to a terminal.
func printable(s string, n int) string {
	s = strings.ToValidUTF8(s, "?")
	if len(s) > n {
		s = strings.ToValidUTF8(s[:n], "") + "…"
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == unicode.ReplacementChar {
			return '?'
		}
		return r
	}, s)
}
