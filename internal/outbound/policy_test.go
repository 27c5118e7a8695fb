package outbound

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestOneOutboundPolicy fails when a package other than this one builds
// an http.Client or http.Transport, or uses net/http's default client or
// transport: each would carry its own redirect and credential rule.
func TestOneOutboundPolicy(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	found := map[string][]string{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "internal/outbound" || strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		if uses := httpUses(f); len(uses) > 0 {
			for _, u := range uses {
				found[rel] = append(found[rel], fset.Position(u.pos).String()+": "+u.what)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	for _, uses := range found {
		bad = append(bad, uses...)
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Errorf("%s: make the request through internal/outbound (NewClient, NewTransport)", b)
	}
}

type use struct {
	pos  token.Pos
	what string
}

// httpUses lists f's composite literals of http.Client and http.Transport
// and its uses of net/http's default client, transport and helpers.
func httpUses(f *ast.File) []use {
	name := ""
	for _, imp := range f.Imports {
		if imp.Path.Value == `"net/http"` {
			name = "http"
			if imp.Name != nil {
				name = imp.Name.Name
			}
		}
	}
	if name == "" {
		return nil
	}
	var out []use
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CompositeLit:
			if sel, ok := n.Type.(*ast.SelectorExpr); ok && isPkg(sel.X, name) && (sel.Sel.Name == "Client" || sel.Sel.Name == "Transport") {
				out = append(out, use{n.Pos(), "builds an http." + sel.Sel.Name})
			}
		case *ast.SelectorExpr:
			if isPkg(n.X, name) {
				switch n.Sel.Name {
				case "DefaultClient", "DefaultTransport", "Get", "Post", "Head", "PostForm":
					out = append(out, use{n.Pos(), "uses http." + n.Sel.Name})
				}
			}
		}
		return true
	})
	return out
}

func isPkg(x ast.Expr, name string) bool {
	id, ok := x.(*ast.Ident)
	return ok && id.Name == name
}
