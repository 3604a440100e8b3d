package sink

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// Lock takes the lock object name with S3's conditional writes: created
// only if absent (If-None-Match: *), renewed and taken over only if it is
// still the version read (If-Match on its ETag). The object holds a random
// token of this Lock, so that no two runs write the same bytes (S3's ETag
// is their MD5): the run holds the lock while the object's ETag is the one
// its own last conditional write returned, and never on the strength of
// what the object says. S3 cannot see a holder die, so a lock expires ttl
// after its last renewal; while held it is renewed every ttl/3. A lock
// found expired is taken over.
func (s *S3) Lock(ctx context.Context, name string, who Holder, ttl time.Duration) (Lock, error) {
	l := &s3Lock{s: s, name: name, h: Holder{Owner: who.Owner, Groups: who.Groups, Token: newToken()}, ttl: ttl,
		stop: make(chan struct{}), done: make(chan struct{})}
	l.h.Acquired = time.Now()
	etag, err := l.put(ctx, nil)
	// Refused: read who holds it. The holder may release the lock between
	// our create and our read of it: then the create is tried again, a
	// few times.
	for try := 0; isPrecondition(err) && try < 5; try++ {
		var held Holder
		var heldTag string
		held, heldTag, err = s.readLock(ctx, name, ttl)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			l.h.Acquired = time.Now()
			etag, err = l.put(ctx, nil)
		case err != nil:
			return nil, err
		case held.Token == l.h.Token:
			// Our create landed but its answer was lost, and the SDK's
			// retry was refused: the object is ours, but only a write of
			// ours on the version read makes its ETag ours.
			etag, err = l.put(ctx, &heldTag)
		case time.Now().Before(held.Expires):
			return nil, &LockedError{Lock: s.String() + name, Holder: held, Expiry: true}
		default:
			// Expired: take it over, if nobody else did since the read
			// (refused: the next read says who did).
			l.h.Acquired = time.Now()
			etag, err = l.put(ctx, &heldTag)
		}
		if isNoSuchKey(err) { // removed since the read: create it
			l.h.Acquired = time.Now()
			etag, err = l.put(ctx, nil)
		}
	}
	if isPrecondition(err) {
		return nil, &LockedError{Lock: s.String() + name, Expiry: true, Note: "is taken and released by other runs again and again"}
	}
	if err != nil {
		return nil, fmt.Errorf("lock %s%s: %w", s, name, explain(err, s.opt.Bucket))
	}
	l.etag = etag
	go l.renew()
	return l, nil
}

type s3Lock struct {
	s    *S3
	name string
	h    Holder // Acquired set; Renewed and Expires set by each put
	ttl  time.Duration
	stop chan struct{}
	done chan struct{}

	renewing sync.Mutex // one renewal at a time: each writes on the ETag of the last

	mu      sync.Mutex
	etag    string    // what this run's last conditional write returned
	expires time.Time // the expiry that write recorded
	err     error     // set once the lock may be lost
}

// put writes the lock with a new expiry: only if absent when ifMatch is nil,
// else only if its ETag is *ifMatch. It returns the new ETag.
func (l *s3Lock) put(ctx context.Context, ifMatch *string) (string, error) {
	l.mu.Lock()
	h := l.h
	l.mu.Unlock()
	now := time.Now()
	h.Renewed, h.Expires = now.UTC(), now.Add(l.ttl).UTC()
	h.Acquired = h.Acquired.UTC()
	body, _ := json.Marshal(h)
	in := &s3.PutObjectInput{
		Bucket: aws.String(l.s.opt.Bucket), Key: l.s.key(l.name),
		Body: bytes.NewReader(body), ContentType: aws.String("application/json"),
	}
	if ifMatch == nil {
		in.IfNoneMatch = aws.String("*")
	} else {
		in.IfMatch = ifMatch
	}
	out, err := l.s.client.PutObject(ctx, in)
	if err != nil {
		return "", err
	}
	if out.ETag == nil {
		return "", errors.New("the store returned no ETag: it cannot hold a lock")
	}
	l.mu.Lock()
	l.h.Renewed, l.h.Expires, l.expires = h.Renewed, h.Expires, now.Add(l.ttl)
	l.mu.Unlock()
	return *out.ETag, nil
}

// readLock returns the content of the lock object name and its ETag. An
// object that is not a lock's JSON counts as held by an unknown owner
// until ttl after it was written.
func (s *S3) readLock(ctx context.Context, name string, ttl time.Duration) (Holder, string, error) {
	var h Holder
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.opt.Bucket), Key: s.key(name)})
	if isNoSuchKey(err) {
		return h, "", fmt.Errorf("read lock %s%s: %w", s, name, fs.ErrNotExist)
	}
	if err != nil {
		return h, "", fmt.Errorf("read lock %s%s: %w", s, name, explain(err, s.opt.Bucket))
	}
	defer out.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(out.Body, 64<<10))
	if err != nil {
		return h, "", fmt.Errorf("read lock %s%s: %w", s, name, err)
	}
	if h, err = parseHolder(raw); err != nil || h.Expires.IsZero() {
		// Not ours to judge: treat it as held by an unknown owner for one ttl.
		written := aws.ToTime(out.LastModified)
		return Holder{Owner: "an unreadable lock object", Acquired: written, Expires: written.Add(ttl)}, aws.ToString(out.ETag), nil
	}
	return h, aws.ToString(out.ETag), nil
}

// renew extends the lock every ttl/3 until Release. A renewal refused
// means the lock was taken over or removed; one that fails until the expiry
// is near may have lost it: either way it is marked lost.
func (l *s3Lock) renew() {
	defer close(l.done)
	every := l.ttl / 3
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		// Half a period: a renewal that hangs leaves time for the next
		// before the expiry, and only two failures in a row lose the lock.
		ctx, cancel := context.WithTimeout(context.Background(), every/2)
		err := l.renewOnce(ctx)
		cancel()
		l.mu.Lock()
		if err != nil && l.err == nil && time.Until(l.expires) < every {
			l.err = fmt.Errorf("could not renew it before it expires: %w", explain(err, l.s.opt.Bucket))
		}
		lost := l.err != nil
		l.mu.Unlock()
		if lost {
			return
		}
	}
}

// renewOnce writes the lock on the version this run last wrote. A refusal
// marks it lost; another error leaves it held until the expiry nears.
func (l *s3Lock) renewOnce(ctx context.Context) error {
	l.renewing.Lock()
	defer l.renewing.Unlock()
	l.mu.Lock()
	tag, lost := l.etag, l.err
	l.mu.Unlock()
	if lost != nil {
		return lost
	}
	next, err := l.put(ctx, &tag)
	if isPrecondition(err) {
		// Refused: perhaps our own renewal landed and only its answer
		// was lost. The token says whether the object is still ours; a
		// write on the version read makes it so.
		next, err = l.reclaim(ctx)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case err == nil:
		l.etag = next
	case isPrecondition(err) || isNoSuchKey(err) || errors.Is(err, errTaken) || errors.Is(err, fs.ErrNotExist):
		l.err = errTaken
	}
	return err
}

// Renew renews the lock now, and fails unless this run surely holds it:
// a publish calls it just before the switch, so that a lock taken over or
// removed since the last renewal is found out in time.
func (l *s3Lock) Renew(ctx context.Context) error {
	if err := l.renewOnce(ctx); err != nil {
		return fmt.Errorf("renew lock %s%s: %w", l.s, l.name, explain(err, l.s.opt.Bucket))
	}
	return nil
}

// reclaim renews the lock after a refused renewal if the object still holds
// this run's token; else it returns the refusal.
func (l *s3Lock) reclaim(ctx context.Context) (string, error) {
	held, tag, err := l.s.readLock(ctx, l.name, l.ttl)
	if err != nil {
		return "", err
	}
	if held.Token != l.h.Token {
		return "", errTaken
	}
	return l.put(ctx, &tag)
}

var errTaken = errors.New("another run took the lock over, or it was removed (sitemapgen unlock)")

func (l *s3Lock) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil && time.Now().After(l.expires) {
		// The renewals are late (a stalled request, a suspended host):
		// another run may take it over now.
		return errors.New("it expired before it could be renewed")
	}
	return l.err
}

func (l *s3Lock) Holder() Holder {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.h
}

// Release stops the renewals and deletes the lock if it is still the
// version this run wrote.
func (l *s3Lock) Release(ctx context.Context) error {
	close(l.stop)
	<-l.done
	l.mu.Lock()
	tag, lost := l.etag, l.err != nil
	l.mu.Unlock()
	if lost {
		return nil // not ours any more
	}
	_, err := l.s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(l.s.opt.Bucket), Key: l.s.key(l.name), IfMatch: &tag})
	if err != nil && !isPrecondition(err) && !isNoSuchKey(err) {
		return fmt.Errorf("release lock %s%s: %w", l.s, l.name, explain(err, l.s.opt.Bucket))
	}
	return nil
}

// Unlock removes the lock object name if it has expired, or, with force,
// whatever its state; an object that is not a lock's JSON is stale. The
// delete is conditional on the version read: a lock renewed or taken over
// meanwhile is not removed.
func (s *S3) Unlock(ctx context.Context, name string, force bool) (Holder, error) {
	h, tag, err := s.readLock(ctx, name, 0)
	if err != nil {
		return h, err
	}
	if !force && time.Now().Before(h.Expires) {
		return h, &LockedError{Lock: s.String() + name, Holder: h, Expiry: true}
	}
	_, err = s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(s.opt.Bucket), Key: s.key(name), IfMatch: &tag})
	switch {
	case isPrecondition(err):
		return h, &LockedError{Lock: s.String() + name, Expiry: true, Note: "changed while it was being removed (renewed or taken by a run): look again"}
	case err != nil:
		return h, fmt.Errorf("unlock %s%s: %w", s, name, explain(err, s.opt.Bucket))
	}
	return h, nil
}

// Held reads the lock object name: held until its expiry. An object that
// is not a lock's JSON is stale, as Unlock takes it.
func (s *S3) Held(ctx context.Context, name string) error {
	h, _, err := s.readLock(ctx, name, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case time.Now().Before(h.Expires):
		return &LockedError{Lock: s.String() + name, Holder: h, Expiry: true}
	}
	return nil
}

// isNoSuchKey reports a request on an object that does not exist.
func isNoSuchKey(err error) bool {
	var nk *types.NoSuchKey
	var ae smithy.APIError
	return errors.As(err, &nk) || errors.As(err, &ae) && ae.ErrorCode() == "NoSuchKey"
}

// isPrecondition reports a conditional request the store refused because
// the object is not in the state asked (412), or was being changed by
// another conditional request (409).
func isPrecondition(err error) bool {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "PreconditionFailed", "ConditionalRequestConflict":
			return true
		}
	}
	return false
}
