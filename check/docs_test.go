package check

import (
	"go/ast"
	goparser "go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sitemapgen/sitemapgen/encode"
)

// TestDocsListEveryCode: the Codes section of docs/validate.md names every
// Code this package declares and every reason of the encoder (the codes of
// loc problems), so a new code cannot go undocumented.
func TestDocsListEveryCode(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "validate.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, codes, ok := strings.Cut(string(doc), "\n## Codes\n")
	if !ok {
		t.Fatal("docs/validate.md has no ## Codes section")
	}
	want := map[string]bool{}
	fset := token.NewFileSet()
	names, _ := filepath.Glob("*.go")
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := goparser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		{
			ast.Inspect(f, func(n ast.Node) bool {
				vs, ok := n.(*ast.ValueSpec)
				if !ok || vs.Type == nil || len(vs.Values) != 1 {
					return true
				}
				if id, ok := vs.Type.(*ast.Ident); ok && id.Name == "Code" {
					if lit, ok := vs.Values[0].(*ast.BasicLit); ok {
						s, _ := strconv.Unquote(lit.Value)
						want[s] = true
					}
				}
				return true
			})
		}
	}
	if len(want) < 30 {
		t.Fatalf("found only %d Code constants: %v", len(want), want)
	}
	for r := encode.OK + 1; r <= encode.TooLong; r++ { // the loc reasons; the later ones are generate's
		want[r.String()] = true
	}
	for c := range want {
		if !strings.Contains(codes, "`"+c+"`") {
			t.Errorf("docs/validate.md's Codes section does not list `%s`", c)
		}
	}
}
