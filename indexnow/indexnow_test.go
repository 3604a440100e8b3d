package indexnow_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sitemapgen/sitemapgen/indexnow"
	"github.com/sitemapgen/sitemapgen/indexnow/indexnowtest"
)

func TestCheckKey(t *testing.T) {
	for key, ok := range map[string]bool{
		"abcd1234": true, "ABCD-efgh-0123": true, strings.Repeat("a", 128): true,
		"abc1234": false, strings.Repeat("a", 129): false, "abcd_1234": false, "abcd 1234": false, "abcdé1234": false, "": false,
	} {
		if err := indexnow.CheckKey(key); (err == nil) != ok {
			t.Errorf("CheckKey(%q) = %v, want ok %v", key, err, ok)
		}
	}
}

func TestKeyFolder(t *testing.T) {
	for _, tc := range []struct {
		loc, folder string
		under       map[string]bool
	}{
		{"https://www.example.com/key.txt", "https://www.example.com/", map[string]bool{
			"https://www.example.com/a": true, "https://WWW.example.com/b/c": true, "http://www.example.com/a": false, "https://example.com/a": false}},
		{"https://www.example.com/catalog/k/key123456.txt", "https://www.example.com/catalog/k/", map[string]bool{
			"https://www.example.com/catalog/k/p1": true, "https://www.example.com/catalog/p1": false, "https://www.example.com/catalog/kx": false}},
	} {
		got, err := indexnow.KeyFolder(tc.loc)
		if err != nil || got != tc.folder {
			t.Errorf("KeyFolder(%q) = %q, %v; want %q", tc.loc, got, err, tc.folder)
		}
		for u, want := range tc.under {
			if indexnow.Under(u, got) != want {
				t.Errorf("Under(%q, %q) = %v, want %v", u, got, !want, want)
			}
		}
	}
	for _, bad := range []string{"ftp://x/key.txt", "https://x.com/", "https://x.com/k.txt?x=1", "/key.txt", "https://x.com"} {
		if _, err := indexnow.KeyFolder(bad); err == nil {
			t.Errorf("KeyFolder(%q) accepted", bad)
		}
	}
}

func urls(host string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("https://%s/p/%d", host, i)
	}
	return out
}

// TestPlan: at most 10,000 URLs and one host per request, in order.
func TestPlan(t *testing.T) {
	c := &indexnow.Client{Key: "abcd1234"}
	list := append(urls("a.example", 25000), urls("b.example", 3)...)
	list = append(list, "https://A.example/late")
	reqs, outside := c.Plan(list)
	var sizes []string
	for _, r := range reqs {
		sizes = append(sizes, fmt.Sprintf("%s:%d", r.Host, len(r.URLList)))
	}
	if want := []string{"a.example:10000", "a.example:10000", "a.example:5001", "b.example:3"}; !slices.Equal(sizes, want) || len(outside) != 0 {
		t.Errorf("requests %q, outside %q; want %q", sizes, outside, want)
	}
	c.KeyLocation = "https://a.example/p/key.txt"
	if _, outside := c.Plan([]string{"https://a.example/p/1", "https://a.example/q/1", "https://b.example/p/1"}); len(outside) != 2 {
		t.Errorf("outside the key location: %q, want the /q/ and b.example URLs", outside)
	}
}

// TestSubmitStatuses: 200 and 202 are accepted; 429 and 5xx are retried,
// Retry-After honoured up to MaxWait; 400, 403 and 422 are failures with
// their meaning, not retried.
func TestSubmitStatuses(t *testing.T) {
	for _, tc := range []struct {
		answers            []int
		requests, accepted int
		failed             string
	}{
		{[]int{200}, 1, 5, ""},
		{[]int{202}, 1, 5, ""},
		{[]int{429, 200}, 2, 5, ""},
		{[]int{503, 502, 200}, 3, 5, ""},
		{[]int{500, 500, 500, 500}, 4, 0, "500"},
		{[]int{400}, 1, 0, "400"},
		{[]int{403}, 1, 0, "403"},
		{[]int{422}, 1, 0, "422"},
	} {
		srv := indexnowtest.NewServer("abcd1234", "")
		srv.Answer(tc.answers...)
		c := &indexnow.Client{Endpoint: srv.URL + "/indexnow", Key: "abcd1234", Backoff: time.Millisecond, MaxWait: 20 * time.Millisecond}
		start := time.Now()
		res := c.Submit(context.Background(), urls("www.example.com", 5))
		srv.Close()
		if errs := srv.Errors(); len(errs) > 0 {
			t.Errorf("%v: the server refused %q", tc.answers, errs)
		}
		if res.Requests != tc.requests || res.Accepted != tc.accepted || res.Sent != 5 || len(srv.Requests()) != tc.requests {
			t.Errorf("%v: %+v; want %d requests, %d accepted", tc.answers, res, tc.requests, tc.accepted)
		}
		if tc.failed != "" && (res.Failed != 5 || res.FailedByStatus[tc.failed] != 5 || len(res.Errors) != 1 ||
			!strings.Contains(res.Errors[0], indexnow.Meaning(atoi(tc.failed)))) {
			t.Errorf("%v: %+v; want 5 failed with %s and its meaning", tc.answers, res, tc.failed)
		}
		if time.Since(start) > 5*time.Second {
			t.Errorf("%v: took %v: the 1 s Retry-After is not capped by MaxWait", tc.answers, time.Since(start))
		}
	}
}

func atoi(s string) int {
	var n int
	fmt.Sscan(s, &n)
	return n
}

// TestSubmitUnreachable: an endpoint that does not answer is a failure
// counted as network, after the retries.
func TestSubmitUnreachable(t *testing.T) {
	srv := indexnowtest.NewServer("abcd1234", "")
	srv.Close()
	c := &indexnow.Client{Endpoint: srv.URL + "/indexnow", Key: "abcd1234", Retries: 2, Backoff: time.Millisecond, HTTP: &http.Client{Timeout: time.Second}}
	res := c.Submit(context.Background(), urls("www.example.com", 3))
	if res.Requests != 3 || res.FailedByStatus["network"] != 3 || res.Accepted != 0 {
		t.Errorf("%+v: want 3 attempts and 3 URLs failed as network", res)
	}
}
