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

// s3LockBody is the content of a lock object.
type s3LockBody struct {
	Owner   string    `json:"owner"`
	Expires time.Time `json:"expires"`
}

// Lock takes the lock object name with S3's conditional writes: created
// only if absent (If-None-Match: *), renewed and taken over only if it is
// still the version read (If-Match on its ETag), so two runs can never both
// believe they hold it. S3 cannot see a holder die, so a lock expires ttl
// after its last renewal; while held it is renewed every ttl/3. A lock found
// expired is taken over.
func (s *S3) Lock(ctx context.Context, name, owner string, ttl time.Duration) (Lock, error) {
	l := &s3Lock{s: s, name: name, owner: owner, ttl: ttl, stop: make(chan struct{}), done: make(chan struct{})}
	etag, err := l.put(ctx, nil)
	// The holder may release the lock between our create and our read of
	// it: then the create is tried again, a few times.
	for try := 0; isPrecondition(err) && try < 5; try++ {
		// Taken, or left by a run that died: take it over only if expired.
		var held s3LockBody
		var heldTag string
		held, heldTag, err = l.read(ctx)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			etag, err = l.put(ctx, nil)
			continue
		case err != nil:
			return nil, err
		case held.Owner == owner:
			// A retried create whose first attempt landed: it is ours.
			l.etag = heldTag
			go l.renew()
			return l, nil
		case time.Now().Before(held.Expires):
			return nil, fmt.Errorf("%w: %s%s is held by %s until %s (renewed while that run lives)",
				ErrLocked, s, name, held.Owner, held.Expires.UTC().Format(time.RFC3339))
		}
		etag, err = l.put(ctx, &heldTag)
		if isPrecondition(err) {
			return nil, fmt.Errorf("%w: %s%s was taken over by another run just now", ErrLocked, s, name)
		}
	}
	if isPrecondition(err) {
		return nil, fmt.Errorf("%w: %s%s is taken and released by other runs again and again", ErrLocked, s, name)
	}
	if err != nil {
		return nil, fmt.Errorf("lock %s%s: %w", s, name, explain(err, s.opt.Bucket))
	}
	l.etag = etag
	go l.renew()
	return l, nil
}

type s3Lock struct {
	s     *S3
	name  string
	owner string
	ttl   time.Duration
	stop  chan struct{}
	done  chan struct{}

	mu   sync.Mutex
	etag string
	err  error // set once the lock may be lost
}

// put writes the lock with a new expiry: only if absent when ifMatch is nil,
// else only if its ETag is *ifMatch. It returns the new ETag.
func (l *s3Lock) put(ctx context.Context, ifMatch *string) (string, error) {
	body, _ := json.Marshal(s3LockBody{Owner: l.owner, Expires: time.Now().Add(l.ttl).UTC()})
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
	return *out.ETag, nil
}

// read returns the lock object's content and ETag.
func (l *s3Lock) read(ctx context.Context) (s3LockBody, string, error) {
	var b s3LockBody
	out, err := l.s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(l.s.opt.Bucket), Key: l.s.key(l.name)})
	var nk *types.NoSuchKey
	if errors.As(err, &nk) {
		return b, "", fmt.Errorf("read lock %s%s: %w", l.s, l.name, fs.ErrNotExist)
	}
	if err != nil {
		return b, "", fmt.Errorf("read lock %s%s: %w", l.s, l.name, explain(err, l.s.opt.Bucket))
	}
	defer out.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(out.Body, 64<<10))
	if err != nil {
		return b, "", fmt.Errorf("read lock %s%s: %w", l.s, l.name, err)
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		// Not ours to judge: treat it as held by an unknown owner for one ttl.
		return s3LockBody{Owner: "an unreadable lock object", Expires: aws.ToTime(out.LastModified).Add(l.ttl)}, aws.ToString(out.ETag), nil
	}
	return b, aws.ToString(out.ETag), nil
}

// renew extends the lock every ttl/3 until Release; a renewal refused
// (the lock was taken over) or impossible until the expiry marks it lost.
func (l *s3Lock) renew() {
	defer close(l.done)
	every := l.ttl / 3
	expires := time.Now().Add(l.ttl)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		l.mu.Lock()
		tag := l.etag
		l.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), every)
		next, err := l.put(ctx, &tag)
		cancel()
		l.mu.Lock()
		switch {
		case err == nil:
			l.etag, expires = next, time.Now().Add(l.ttl)
		case isPrecondition(err):
			l.err = errors.New("another run took the lock over")
		case time.Until(expires) < every:
			l.err = fmt.Errorf("could not renew it before it expires: %w", explain(err, l.s.opt.Bucket))
		}
		lost := l.err != nil
		l.mu.Unlock()
		if lost {
			return
		}
	}
}

func (l *s3Lock) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
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
	if err != nil && !isPrecondition(err) {
		return fmt.Errorf("release lock %s%s: %w", l.s, l.name, explain(err, l.s.opt.Bucket))
	}
	return nil
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
