package pipeline

import (
	"context"
	"time"
)

// uploadGrace bounds how long uploads in flight may go on after the run
// has failed or been interrupted.
const uploadGrace = 30 * time.Second

// detach returns a context that is canceled grace after ctx is, so work in
// flight when ctx ends can finish.
func detach(ctx context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	dctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(grace, cancel) })
	return dctx, func() { stop(); cancel() }
}

// upload stores the shards it receives under putCtx, and starts no new
// upload once ctx is done.
func (r *run) upload(ctx, putCtx context.Context, in <-chan upload) error {
	for u := range in {
		if ctx.Err() != nil {
			u.free <- u.data
			continue // drain: the run has failed
		}
		t := time.Now()
		var err error
		if u.news {
			err = u.tx.PutNews(putCtx, u.file, u.data)
		} else {
			err = u.tx.PutShard(putCtx, u.file, u.data)
		}
		u.free <- u.data
		if err != nil {
			return err
		}
		r.times.write.Add(int64(time.Since(t)))
		r.progress.Shards.Add(1)
	}
	return nil
}
