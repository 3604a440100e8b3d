// Package indexnowtest is an IndexNow endpoint for tests: it checks each
// request against the protocol and records what it was sent.
package indexnowtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"

	"github.com/sitemapgen/sitemapgen/indexnow"
)

// Server is an IndexNow endpoint on 127.0.0.1.
type Server struct {
	*httptest.Server
	Key         string // the key every request must carry
	KeyLocation string // the keyLocation every request must carry ("" none)

	mu       sync.Mutex
	statuses []int // answers to give, in order; then 200
	requests []indexnow.Request
	errs     []string
}

// NewServer starts a Server expecting key and keyLocation.
func NewServer(key, keyLocation string) *Server {
	s := &Server{Key: key, KeyLocation: keyLocation}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Answer queues the statuses of the next requests (a 429 carries
// Retry-After: 1).
func (s *Server) Answer(statuses ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.statuses = append(s.statuses, statuses...)
}

func (s *Server) refuse(w http.ResponseWriter, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.errs = append(s.errs, msg)
	http.Error(w, msg, http.StatusBadRequest)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Method != http.MethodPost || r.URL.Path != "/indexnow" {
		s.refuse(w, "%s %s: want POST /indexnow", r.Method, r.URL.Path)
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		s.refuse(w, "content type %q", ct)
		return
	}
	var rq indexnow.Request
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rq); err != nil {
		s.refuse(w, "body: %v", err)
		return
	}
	switch {
	case rq.Key != s.Key:
		s.refuse(w, "key %q, want %q", rq.Key, s.Key)
		return
	case rq.KeyLocation != s.KeyLocation:
		s.refuse(w, "keyLocation %q, want %q", rq.KeyLocation, s.KeyLocation)
		return
	case rq.Host == "":
		s.refuse(w, "no host")
		return
	case len(rq.URLList) == 0 || len(rq.URLList) > indexnow.MaxURLsPerRequest:
		s.refuse(w, "%d URLs: want 1 to %d", len(rq.URLList), indexnow.MaxURLsPerRequest)
		return
	}
	folder := ""
	if rq.KeyLocation != "" {
		var err error
		if folder, err = indexnow.KeyFolder(rq.KeyLocation); err != nil {
			s.refuse(w, "keyLocation: %v", err)
			return
		}
	}
	for _, raw := range rq.URLList {
		u, err := url.Parse(raw)
		if err != nil || !strings.EqualFold(u.Host, rq.Host) {
			s.refuse(w, "URL %q is not of host %q", raw, rq.Host)
			return
		}
		if folder != "" && !indexnow.Under(raw, folder) {
			s.refuse(w, "URL %q is not under the key location's folder %s", raw, folder)
			return
		}
	}
	s.requests = append(s.requests, rq)
	status := http.StatusOK
	if len(s.statuses) > 0 {
		status, s.statuses = s.statuses[0], s.statuses[1:]
	}
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
	}
	w.WriteHeader(status)
}

// Requests returns the requests that passed the checks, in order, whatever
// they were answered.
func (s *Server) Requests() []indexnow.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]indexnow.Request(nil), s.requests...)
}

// URLs returns every URL of the requests that passed the checks, in
// order, retries included.
func (s *Server) URLs() []string {
	var urls []string
	for _, rq := range s.Requests() {
		urls = append(urls, rq.URLList...)
	}
	return urls
}

// Errors returns what the server refused as not the protocol.
func (s *Server) Errors() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.errs...)
}
