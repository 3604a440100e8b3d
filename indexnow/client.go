package indexnow

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client posts URLs to an IndexNow endpoint.
type Client struct {
	Endpoint string // DefaultEndpoint if empty
	Key      string // checked with CheckKey
	// KeyLocation is the URL of the key file when it is not KEY.txt at the
	// host's root; only URLs under its folder are then sent.
	KeyLocation string
	HTTP        *http.Client  // nil: a client whose requests time out after 30 s
	Retries     int           // retries of a Request answered 429 or 5xx, or lost (default 3)
	Backoff     time.Duration // the first wait, doubled each retry (default 1 s)
	MaxWait     time.Duration // the longest wait, a Retry-After included (default 60 s)
	Log         *slog.Logger  // nil: discard
}

// Result counts what a submission did, in URLs; it goes in the run's
// report and metrics.
type Result struct {
	Added    int `json:"added"`    // entries new since the previous generation
	Changed  int `json:"changed"`  // entries whose content (any field) changed
	Removed  int `json:"removed"`  // entries gone
	Requests int `json:"requests"` // HTTP requests made, retries included
	Sent     int `json:"sent"`     // URLs posted
	Accepted int `json:"accepted"` // URLs in requests answered 200 or 202
	Failed   int `json:"failed"`   // URLs not accepted
	// FailedByStatus splits Failed by HTTP status, "network" (no answer)
	// or "outside_key_location" (not sent).
	FailedByStatus map[string]int `json:"failed_by_status,omitempty"`
	Errors         []string       `json:"errors,omitempty"`  // what each failure meant
	Skipped        string         `json:"skipped,omitempty"` // why nothing was sent
	DryRun         bool           `json:"dry_run,omitempty"`
	// URLs are, in a dry run, the URLs that would be sent in Requests
	// requests.
	URLs []string `json:"urls,omitempty"`
}

// Fail counts n URLs failed for status (an HTTP status or a word) with
// msg, what it meant.
func (r *Result) Fail(status string, n int, msg string) {
	if r.FailedByStatus == nil {
		r.FailedByStatus = map[string]int{}
	}
	r.FailedByStatus[status] += n
	r.Failed += n
	r.Errors = append(r.Errors, msg)
}

// Meaning says what the protocol says an answer's status means.
func Meaning(status int) string {
	switch status {
	case http.StatusOK:
		return "URLs submitted"
	case http.StatusAccepted:
		return "URLs received, the key's validation pending"
	case http.StatusBadRequest:
		return "bad Request: invalid format"
	case http.StatusForbidden:
		return "forbidden: the key is not valid (no key file at the key location, or it does not hold the key)"
	case http.StatusUnprocessableEntity:
		return "unprocessable: URLs that do not belong to the host, or a key that does not match the protocol's schema"
	case http.StatusTooManyRequests:
		return "too many requests (potential spam)"
	}
	if status >= 500 {
		return "server error"
	}
	return http.StatusText(status)
}

// Request is one request's body, the protocol's JSON.
type Request struct {
	Host        string   `json:"host"`
	Key         string   `json:"key"`
	KeyLocation string   `json:"keyLocation,omitempty"`
	URLList     []string `json:"urlList"`
}

// Plan splits urls into the requests Submit would post: one host per
// Request, at most MaxURLsPerRequest URLs each, hosts in order of first
// appearance. URLs that cannot be sent (unparsable, outside the key
// location's folder) are returned apart.
func (c *Client) Plan(urls []string) (reqs []Request, outside []string) {
	folder := ""
	if c.KeyLocation != "" {
		folder, _ = KeyFolder(c.KeyLocation)
	}
	byHost := map[string][]string{}
	var hosts []string
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" || (folder != "" && !Under(raw, folder)) {
			outside = append(outside, raw)
			continue
		}
		h := strings.ToLower(u.Host)
		if _, ok := byHost[h]; !ok {
			hosts = append(hosts, h)
		}
		byHost[h] = append(byHost[h], raw)
	}
	for _, h := range hosts {
		list := byHost[h]
		for len(list) > 0 {
			n := min(len(list), MaxURLsPerRequest)
			reqs = append(reqs, Request{Host: h, Key: c.Key, KeyLocation: c.KeyLocation, URLList: list[:n:n]})
			list = list[n:]
		}
	}
	return reqs, outside
}

// Submit posts urls and says what became of them. It never fails: a
// failure is counted and said in the Result.
func (c *Client) Submit(ctx context.Context, urls []string) Result {
	var res Result
	reqs, outside := c.Plan(urls)
	if len(outside) > 0 {
		res.Fail("outside_key_location", len(outside), fmt.Sprintf("%d URLs not under the key location's folder (%s), not sent, e.g. %s", len(outside), c.KeyLocation, outside[0]))
	}
	for _, rq := range reqs {
		if ctx.Err() != nil {
			res.Fail("network", len(rq.URLList), fmt.Sprintf("%s: not sent: %v", rq.Host, ctx.Err()))
			continue
		}
		res.Sent += len(rq.URLList)
		status, err := c.post(ctx, rq, &res)
		switch {
		case err != nil:
			res.Fail("network", len(rq.URLList), fmt.Sprintf("%s: %d URLs: %v", rq.Host, len(rq.URLList), err))
		case status == http.StatusOK || status == http.StatusAccepted:
			res.Accepted += len(rq.URLList)
		default:
			res.Fail(strconv.Itoa(status), len(rq.URLList), fmt.Sprintf("%s: %d URLs: %d %s", rq.Host, len(rq.URLList), status, Meaning(status)))
		}
	}
	return res
}

// post sends one Request, retrying 429, 5xx and lost requests with
// exponential backoff (a Retry-After honoured, both capped at MaxWait),
// and returns the last status.
func (c *Client) post(ctx context.Context, rq Request, res *Result) (int, error) {
	client, endpoint := c.HTTP, c.Endpoint
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	if endpoint == "" {
		endpoint = DefaultEndpoint
	}
	retries, wait, maxWait := c.Retries, c.Backoff, c.MaxWait
	if retries == 0 {
		retries = 3
	}
	if wait <= 0 {
		wait = time.Second
	}
	if maxWait <= 0 {
		maxWait = time.Minute
	}
	log := c.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	body, err := json.Marshal(rq)
	if err != nil {
		return 0, err
	}
	for attempt := 0; ; attempt++ {
		status, after, err := c.once(ctx, client, endpoint, body)
		res.Requests++
		retry := err != nil || status == http.StatusTooManyRequests || status >= 500
		if !retry || attempt == retries {
			return status, err
		}
		d := min(wait<<attempt, maxWait)
		if after > 0 {
			d = min(after, maxWait)
		}
		log.Warn("indexnow: retrying", "host", rq.Host, "urls", len(rq.URLList), "status", status, "err", err, "wait", d.String())
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return status, errors.Join(err, ctx.Err())
		}
	}
}

// once posts body and returns the status and the Retry-After it gave.
func (c *Client) once(ctx context.Context, client *http.Client, endpoint string, body []byte) (int, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	resp, err := client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // let the connection be reused
	resp.Body.Close()
	return resp.StatusCode, retryAfter(resp.Header.Get("Retry-After")), nil
}

// retryAfter reads a Retry-After of seconds or an HTTP date.
func retryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, time.Until(t))
	}
	return 0
}
