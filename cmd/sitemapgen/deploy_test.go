package main

import (
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/internal/runlog"
)

// checkCommand runs a command line from a deployment example through the
// CLI's own flag parsing and the checks of the flags that need no store,
// and returns the parsed flags.
func checkCommand(t *testing.T, what string, args []string) *generateFlags {
	t.Helper()
	if len(args) == 0 || args[0] != "generate" {
		t.Fatalf("%s: command %q does not start with generate", what, args)
	}
	fs, f := newGenerateFlags(io.Discard)
	inputs, err := parseInterspersed(fs, args[1:])
	if err != nil {
		t.Fatalf("%s: the CLI refuses %q: %v", what, args, err)
	}
	if len(inputs) == 0 {
		t.Errorf("%s: no INPUT in %q", what, args)
	}
	if _, err := encode.ParseScope(f.publicURL); err != nil {
		t.Errorf("%s: --public-url: %v", what, err)
	}
	if _, err := runlog.ParseFormat(f.logFormat); err != nil {
		t.Errorf("%s: --log-format: %v", what, err)
	}
	return f
}

func readDeploy(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../../deploy", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDeployKubernetes (done-when 2): the CronJob parses, forbids overlapping
// runs, sizes memory above the measured peak RSS, mounts a volume where
// --tmp points, runs as non-root, and its arguments are accepted by the CLI.
func TestDeployKubernetes(t *testing.T) {
	var cj struct {
		Kind string
		Spec struct {
			ConcurrencyPolicy string `yaml:"concurrencyPolicy"`
			JobTemplate       struct {
				Spec struct {
					Template struct {
						Spec struct {
							SecurityContext struct {
								RunAsNonRoot bool `yaml:"runAsNonRoot"`
							} `yaml:"securityContext"`
							Containers []struct {
								Name, Image string
								Args        []string
								Env         []struct{ Name, Value string }
								Resources   struct {
									Requests, Limits map[string]string
								}
								VolumeMounts []struct {
									Name      string
									MountPath string `yaml:"mountPath"`
								} `yaml:"volumeMounts"`
							}
							Volumes []struct{ Name string }
						}
					}
				} `yaml:"spec"`
			} `yaml:"jobTemplate"`
		}
	}
	if err := yaml.Unmarshal(readDeploy(t, "kubernetes/cronjob.yaml"), &cj); err != nil {
		t.Fatal(err)
	}
	if cj.Kind != "CronJob" || cj.Spec.ConcurrencyPolicy != "Forbid" {
		t.Errorf("kind %q, concurrencyPolicy %q: want a CronJob with Forbid", cj.Kind, cj.Spec.ConcurrencyPolicy)
	}
	pod := cj.Spec.JobTemplate.Spec.Template.Spec
	if !pod.SecurityContext.RunAsNonRoot || len(pod.Containers) != 1 {
		t.Fatalf("pod: runAsNonRoot %v, %d containers", pod.SecurityContext.RunAsNonRoot, len(pod.Containers))
	}
	c := pod.Containers[0]
	f := checkCommand(t, "cronjob", c.Args)
	mounts := map[string]bool{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = true
	}
	if f.tmp == "" || !mounts[f.tmp] || !mounts["/tmp"] {
		t.Errorf("--tmp %q and /tmp must be mounted volumes; mounts %v", f.tmp, mounts)
	}
	if f.indexNowKeyFile == "" || !mounts[filepath.Dir(f.indexNowKeyFile)] {
		t.Errorf("--indexnow-key-file %q must be in a mounted volume; mounts %v", f.indexNowKeyFile, mounts)
	}
	if !strings.HasPrefix(f.out, "s3://") || !slices.ContainsFunc(c.Env, func(e struct{ Name, Value string }) bool { return e.Name == "AWS_REGION" }) {
		t.Errorf("--out %q, env %v: the example publishes to S3 with AWS_REGION set", f.out, c.Env)
	}
	// docs/performance.md: 195 MiB at most measured (Parquet from S3).
	if c.Resources.Requests["memory"] != "256Mi" || c.Resources.Limits["memory"] != "512Mi" || c.Resources.Requests["cpu"] == "" {
		t.Errorf("resources %+v: want 256Mi requested, 512Mi limit (measured peak 195 MiB), and CPU", c.Resources)
	}
}

// TestDeployAWSBatch: the job definition parses, its command is accepted by
// the CLI and --tmp is a mount point; the IAM policy grants exactly the S3
// actions of the calls sink/ (the destination) and s3obj (the inputs) make,
// each on its own bucket and prefix.
func TestDeployAWSBatch(t *testing.T) {
	var jd struct {
		ContainerProperties struct {
			Command     []string
			User        string
			MountPoints []struct {
				ContainerPath string
			}
		}
		RetryStrategy struct {
			EvaluateOnExit []struct{ OnExitCode, Action string }
		}
	}
	if err := json.Unmarshal(readDeploy(t, "aws-batch/job-definition.json"), &jd); err != nil {
		t.Fatal(err)
	}
	f := checkCommand(t, "job definition", jd.ContainerProperties.Command)
	var tmpMounted bool
	for _, m := range jd.ContainerProperties.MountPoints {
		tmpMounted = tmpMounted || m.ContainerPath == f.tmp
	}
	if f.tmp == "" || !tmpMounted || jd.ContainerProperties.User == "" || jd.ContainerProperties.User == "0" {
		t.Errorf("--tmp %q mounted %v, user %q: want a mounted --tmp and a non-root user", f.tmp, tmpMounted, jd.ContainerProperties.User)
	}
	if e := jd.RetryStrategy.EvaluateOnExit; len(e) == 0 || e[0].OnExitCode != "2" || e[0].Action != "EXIT" {
		t.Errorf("retry strategy %+v: a usage error (exit 2) must not be retried", e)
	}

	var policy struct {
		Statement []struct {
			Effect    string
			Action    []string
			Resource  string
			Condition map[string]map[string][]string
		}
	}
	if err := json.Unmarshal(readDeploy(t, "aws-batch/iam-policy.json"), &policy); err != nil {
		t.Fatal(err)
	}
	out := strings.TrimPrefix(f.out, "s3://")
	outBucket, outPrefix, _ := strings.Cut(out, "/")
	inputs, _ := parseInterspersed(newFlagsDiscard(), jd.ContainerProperties.Command[1:])
	inBucket, inPrefix, _ := strings.Cut(strings.TrimPrefix(inputs[0], "s3://"), "/")
	granted := map[string]map[string]bool{} // bucket -> actions
	for _, s := range policy.Statement {
		if s.Effect != "Allow" {
			continue
		}
		bucket, objects, _ := strings.Cut(strings.TrimPrefix(s.Resource, "arn:aws:s3:::"), "/")
		want := map[string]string{outBucket: outPrefix + "*", inBucket: inPrefix + "*"}[bucket]
		if want == "" || (objects != "" && objects != want) {
			t.Errorf("statement on %s: want %s or %s/%s only", s.Resource, bucket, bucket, want)
		}
		for _, a := range s.Action {
			if a == "s3:ListBucket" {
				p := map[string]string{outBucket: outPrefix, inBucket: inPrefix}[bucket]
				if got := s.Condition["StringLike"]["s3:prefix"]; !slices.Equal(got, []string{p, p + "*"}) {
					t.Errorf("s3:ListBucket on %s: prefix condition %q, want the prefix %s", bucket, got, p)
				}
			}
			if granted[bucket] == nil {
				granted[bucket] = map[string]bool{}
			}
			granted[bucket][a] = true
		}
	}
	for bucket, dirs := range map[string][]string{outBucket: {"../../sink"}, inBucket: {"../../pipeline/input/s3obj"}} {
		need := s3Actions(t, dirs...)
		var got []string
		for a := range granted[bucket] {
			got = append(got, a)
		}
		slices.Sort(got)
		if !slices.Equal(got, need) {
			t.Errorf("bucket %s: the policy grants %q, the code's S3 calls need %q", bucket, got, need)
		}
	}
}

func newFlagsDiscard() *flag.FlagSet {
	fs, _ := newGenerateFlags(io.Discard)
	return fs
}

// iamAction is the IAM action of each S3 call the code makes. A call not
// listed fails the test: add its action to deploy/aws-batch/iam-policy.json,
// docs/s3.md and here.
var iamAction = map[string][]string{
	"PutObject":            {"s3:PutObject"},
	"GetObject":            {"s3:GetObject"},
	"HeadObject":           {"s3:GetObject"},
	"ListObjectsV2":        {"s3:ListBucket"},
	"DeleteObject":         {"s3:DeleteObject"},
	"DeleteObjects":        {"s3:DeleteObject"},
	"ListMultipartUploads": {"s3:ListBucketMultipartUploads"},
	"AbortMultipartUpload": {"s3:AbortMultipartUpload"},
	// The transfer manager: PutObject, or Create/UploadPart/Complete
	// (s3:PutObject) and AbortMultipartUpload when a part fails.
	"UploadObject": {"s3:PutObject", "s3:AbortMultipartUpload"},
}

var s3Call = regexp.MustCompile(`\.(?:client|tm)\.([A-Z]\w+)\(`)

// s3Actions returns the IAM actions of the S3 calls in the Go files of dirs.
func s3Actions(t *testing.T, dirs ...string) []string {
	t.Helper()
	set := map[string]bool{}
	for _, d := range dirs {
		files, _ := filepath.Glob(filepath.Join(d, "*.go"))
		for _, p := range files {
			if strings.HasSuffix(p, "_test.go") {
				continue
			}
			src, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range s3Call.FindAllStringSubmatch(string(src), -1) {
				acts, ok := iamAction[m[1]]
				if !ok {
					t.Errorf("%s calls S3 %s, whose IAM action the policy test does not know", p, m[1])
				}
				for _, a := range acts {
					set[a] = true
				}
			}
		}
	}
	var out []string
	for a := range set {
		out = append(out, a)
	}
	slices.Sort(out)
	if len(out) == 0 {
		t.Fatalf("no S3 calls found in %q", dirs)
	}
	return out
}

// TestDeployGitHubActions: the workflow parses, never runs twice at once,
// and the sitemapgen command of its generate step is accepted by the CLI.
func TestDeployGitHubActions(t *testing.T) {
	var wf struct {
		Concurrency struct {
			Group            string
			CancelInProgress bool `yaml:"cancel-in-progress"`
		}
		Jobs map[string]struct {
			Steps []struct{ Name, Run string }
		}
	}
	if err := yaml.Unmarshal(readDeploy(t, "github-actions/sitemaps.yml"), &wf); err != nil {
		t.Fatal(err)
	}
	if wf.Concurrency.Group == "" || wf.Concurrency.CancelInProgress {
		t.Errorf("concurrency %+v: want a group that does not cancel a run in progress", wf.Concurrency)
	}
	var run string
	for _, s := range wf.Jobs["generate"].Steps {
		if s.Name == "generate" {
			run = s.Run
		}
	}
	words := shellWords(run)
	i := slices.IndexFunc(words, func(w string) bool { return strings.Contains(w, "/sitemapgen:") })
	if i < 0 {
		t.Fatalf("no sitemapgen image in the generate step: %q", words)
	}
	f := checkCommand(t, "workflow", words[i+1:])
	if !slices.ContainsFunc(words[:i], func(w string) bool { return strings.HasSuffix(w, ":"+f.tmp) }) {
		t.Errorf("--tmp %q is not a mounted volume: %q", f.tmp, words[:i])
	}
}

// shellWords splits a shell command into words: backslash-newlines join
// lines, quotes group, nothing is expanded.
func shellWords(s string) []string {
	s = strings.ReplaceAll(s, "\\\n", " ")
	var words []string
	var w strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			w.WriteByte(c)
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\n' || c == '\t':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, w.String())
	}
	return words
}
