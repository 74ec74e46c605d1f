package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
)

// module is the import path of the repository's Go module.
const module = "github.com/gale-rmm/gale"

// file is one parsed Go file with the folders its imports name.
type file struct {
	rel     string            // slash-separated, relative to the root
	dir     string            // its folder, relative to the root
	ast     *ast.File         //
	imports map[string]string // the name a file uses for an in-module package -> its folder
	test    bool
}

// global is a package-level constant or variable whose value is one expression.
type global struct {
	expr ast.Expr
	in   *file // the file it is declared in: its imports resolve the expression
}

// source is the module's Go files: the test files the index reads, and what
// their identifiers resolve through.
type source struct {
	files   []*file
	globals map[string]map[string]global          // folder -> name -> value
	helpers map[string]map[string][]*ast.FuncDecl // folder -> name -> the test files' non-test functions
	fileOf  map[*ast.FuncDecl]*file
}

// load parses every Go file under root but the ones of another module
// (infra/cdk), of npm and of generated output.
func load(root string) (*source, error) {
	s := &source{globals: map[string]map[string]global{}, helpers: map[string]map[string][]*ast.FuncDecl{}, fileOf: map[*ast.FuncDecl]*file{}}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch {
			case rel == "infra/cdk", strings.HasPrefix(d.Name(), ".") && rel != ".", strings.HasPrefix(d.Name(), "_"):
				return filepath.SkipDir
			}
			switch d.Name() {
			case "node_modules", "testdata", "cdk.out", "dist", "bin":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		s.add(&file{rel: rel, dir: filepath.ToSlash(filepath.Dir(rel)), ast: f, test: strings.HasSuffix(rel, "_test.go")})
		return nil
	})
	return s, err
}

func (s *source) add(f *file) {
	f.imports = map[string]string{}
	for _, im := range f.ast.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		if !strings.HasPrefix(p, module+"/") {
			continue
		}
		name := p[strings.LastIndex(p, "/")+1:]
		if im.Name != nil {
			name = im.Name.Name
		}
		f.imports[name] = strings.TrimPrefix(p, module+"/")
	}
	s.files = append(s.files, f)
	if s.globals[f.dir] == nil {
		s.globals[f.dir] = map[string]global{}
		s.helpers[f.dir] = map[string][]*ast.FuncDecl{}
	}
	for _, d := range f.ast.Decls {
		switch d := d.(type) {
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				if v, ok := spec.(*ast.ValueSpec); ok && len(v.Names) == len(v.Values) {
					for i, n := range v.Names {
						s.globals[f.dir][n.Name] = global{v.Values[i], f}
					}
				}
			}
		case *ast.FuncDecl:
			s.fileOf[d] = f
			if f.test && !isTest(d) {
				s.helpers[f.dir][d.Name.Name] = append(s.helpers[f.dir][d.Name.Name], d)
			}
		}
	}
}

// isTest reports whether d is a function the go tool runs: a test, benchmark,
// fuzz target or example.
func isTest(d *ast.FuncDecl) bool {
	if d.Recv != nil {
		return false
	}
	for _, p := range []string{"Test", "Benchmark", "Fuzz", "Example"} {
		if strings.HasPrefix(d.Name.Name, p) && d.Name.Name != "TestMain" {
			return true
		}
	}
	return false
}
