package publish

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/sitemapgen/sitemapgen/sink"
)

// TestRobotsChangeSaidOnlyWhenLive: a run whose new robots lines never went
// live (here --verify fails) reports robots_changed false and logs nothing
// to deploy; it used to say "deploy the new robots lines" and report true
// with published false. A run that publishes them says why they changed.
func TestRobotsChangeSaidOnlyWhenLive(t *testing.T) {
	ctx := context.Background()
	store, err := sink.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	night := func(shards int, base string, verify func(context.Context, string, map[string][]byte, func(string) bool) error) (*Result, string, error) {
		t.Helper()
		var log bytes.Buffer
		l := NewLayout("sitemap")
		tx, err := Begin(ctx, store, l, Options{MaxShrink: 1, Verify: verify, Log: slog.New(slog.NewTextHandler(&log, nil))})
		if err != nil {
			t.Fatal(err)
		}
		var data []string
		for i := range shards {
			data = append(data, fmt.Sprintf("shard %d", i))
		}
		set := putShards(t, tx, l, data...)
		set.Rows, set.Fanout, set.Base = set.URLs, 2, base
		res, err := tx.Commit(ctx, set)
		if err != nil {
			tx.Abort(ctx)
		}
		return res, log.String(), err
	}
	if _, _, err := night(2, "https://ex.com/", nil); err != nil { // one line: the root
		t.Fatal(err)
	}
	// Three shards need two intermediate indexes: two lines. Verify fails.
	res, log, err := night(3, "https://ex.com/", func(context.Context, string, map[string][]byte, func(string) bool) error {
		return errors.New("injected")
	})
	if err == nil || res.Published {
		t.Fatalf("verify failed, yet err %v, published %v", err, res.Published)
	}
	if res.RobotsChanged || strings.Contains(log, "robots") {
		t.Errorf("a failed run: robots_changed %v, log:\n%s", res.RobotsChanged, log)
	}
	res, log, err = night(3, "https://ex.com/", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.RobotsChanged || !strings.Contains(log, "deploy the new robots lines (the number of indexes that list sitemaps changed: 1 -> 2)") {
		t.Errorf("robots_changed %v, log:\n%s", res.RobotsChanged, log)
	}
	// The same set served from elsewhere: the lines change, not their number.
	res, log, err = night(3, "https://cdn.ex.com/maps/", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.RobotsChanged || !strings.Contains(log, "(the public URL changed: https://ex.com/ -> https://cdn.ex.com/maps/)") {
		t.Errorf("robots_changed %v, log:\n%s", res.RobotsChanged, log)
	}
	res, log, err = night(3, "https://cdn.ex.com/maps/", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.RobotsChanged || strings.Contains(log, "robots") {
		t.Errorf("unchanged lines: robots_changed %v, log:\n%s", res.RobotsChanged, log)
	}
}
