// Package metricstest is a Pushgateway for tests and a reader of textfiles.
package metricstest

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Gateway is a Pushgateway for tests: it parses each push with the
// Prometheus text parser and keeps the groups as the Pushgateway does, with
// its semantics: POST replaces the pushed metric families of the group and
// keeps the others, PUT replaces the group, DELETE removes it.
type Gateway struct {
	*httptest.Server

	mu     sync.Mutex
	groups map[string]map[string]*dto.MetricFamily // grouping key "job=x,name=y,..." -> family name -> family
	errs   []string                                // what a real Pushgateway would refuse
	pushes int                                     // requests served
}

// NewGateway starts a Gateway on 127.0.0.1.
func NewGateway() *Gateway {
	g := &Gateway{groups: map[string]map[string]*dto.MetricFamily{}}
	g.Server = httptest.NewServer(http.HandlerFunc(g.serve))
	return g
}

func (g *Gateway) refuse(w http.ResponseWriter, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	g.errs = append(g.errs, msg)
	http.Error(w, msg, http.StatusBadRequest)
}

func (g *Gateway) serve(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pushes++
	key, labels, err := groupingKey(r.URL.EscapedPath())
	if err != nil {
		g.refuse(w, "%s: %v", r.URL.Path, err)
		return
	}
	if r.Method == http.MethodDelete {
		delete(g.groups, key)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if r.Method != http.MethodPost && r.Method != http.MethodPut {
		g.refuse(w, "method %s", r.Method)
		return
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		g.refuse(w, "content type %q: the test parses text", ct)
		return
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r.Body)
	if err != nil {
		g.refuse(w, "body: %v", err)
		return
	}
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "instance" {
					g.refuse(w, "%s carries an instance label", name)
					return
				}
				if v, ok := labels[l.GetName()]; ok && v != l.GetValue() {
					g.refuse(w, "%s: label %s=%q conflicts with the grouping key's %q", name, l.GetName(), l.GetValue(), v)
					return
				}
			}
		}
	}
	if r.Method == http.MethodPut || g.groups[key] == nil {
		g.groups[key] = map[string]*dto.MetricFamily{}
	}
	for name, f := range fams {
		g.groups[key][name] = f
	}
	w.WriteHeader(http.StatusOK)
}

// groupingKey reads /metrics/job/J/LABEL/VALUE/... with the @base64 form of
// values holding a slash.
func groupingKey(path string) (string, map[string]string, error) {
	rest, ok := strings.CutPrefix(path, "/metrics/")
	parts := strings.Split(rest, "/")
	if !ok || len(parts)%2 != 0 || parts[0] != "job" {
		return "", nil, fmt.Errorf("not a push path")
	}
	labels := map[string]string{}
	for i := 0; i < len(parts); i += 2 {
		name, value := parts[i], parts[i+1]
		if n, ok := strings.CutSuffix(name, "@base64"); ok {
			b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(value, "="))
			if err != nil {
				return "", nil, err
			}
			name, value = n, string(b)
		} else if strings.Contains(value, "%2F") {
			return "", nil, fmt.Errorf("label %s: an escaped slash, which the Pushgateway refuses", name)
		}
		labels[name] = value
	}
	return keyOf(labels), labels, nil
}

// keyOf is the grouping key of labels, whatever order a push path names
// them in (the client's is a map's).
func keyOf(labels map[string]string) string {
	var key []string
	for n, v := range labels {
		key = append(key, n+"="+v)
	}
	slices.Sort(key)
	return strings.Join(key, ",")
}

// Values returns the gauges of the group with the grouping labels kv
// (name, value, ...), as family name -> label string -> value.
func (g *Gateway) Values(kv ...string) map[string]map[string]float64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	labels := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		labels[kv[i]] = kv[i+1]
	}
	return values(g.groups[keyOf(labels)])
}

// Pushes returns how many requests the Gateway has served.
func (g *Gateway) Pushes() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.pushes
}

// Errors returns what a real Pushgateway would have refused.
func (g *Gateway) Errors() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.errs...)
}

// values flattens families to name -> "l1=v1,l2=v2" -> value.
func values(fams map[string]*dto.MetricFamily) map[string]map[string]float64 {
	out := map[string]map[string]float64{}
	for name, f := range fams {
		out[name] = map[string]float64{}
		for _, m := range f.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			out[name][strings.Join(ls, ",")] = m.GetGauge().GetValue()
		}
	}
	return out
}

// ReadFile parses the textfile at path with the Prometheus text parser and
// returns its gauges as Values does.
func ReadFile(path string) (map[string]map[string]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return values(fams), nil
}
