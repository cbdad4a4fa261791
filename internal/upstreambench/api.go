//go:build linux

package upstreambench

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// API is the set of exported names of a cilium/ebpf ringbuf package as
// seen on linux/amd64: "NewReader", "Reader", "Reader.ReadInto" (a method)
// and "Record.RawSample" (a struct field).
type API map[string]bool

// DetectAPI parses the ringbuf package under a cilium/ebpf module's dir,
// the files that build on linux/amd64 and are not tests, and lists its
// exported names. It reads declarations only: whether they compile
// together with our benchmark is the build's to say.
func DetectAPI(dir string) (API, error) {
	pkgDir := filepath.Join(dir, "ringbuf")
	entries, err := os.ReadDir(pkgDir)
	if err != nil {
		return nil, fmt.Errorf("read ringbuf package: %w", err)
	}
	ctx := build.Default
	ctx.GOOS, ctx.GOARCH = "linux", "amd64"
	fset := token.NewFileSet()
	api := API{}
	for _, entry := range entries {
		name := entry.Name()
		if entry.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		if ok, err := ctx.MatchFile(pkgDir, name); err != nil || !ok {
			continue
		}
		file, err := parser.ParseFile(fset, filepath.Join(pkgDir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("parse ringbuf package: %w", err)
		}
		api.addFile(file)
	}
	if len(api) == 0 {
		return nil, fmt.Errorf("ringbuf package in %s exports nothing on linux", dir)
	}
	return api, nil
}

// addFile records the exported declarations of one file.
func (api API) addFile(file *ast.File) {
	for _, decl := range file.Decls {
		switch decl := decl.(type) {
		case *ast.FuncDecl:
			if !decl.Name.IsExported() {
				continue
			}
			if decl.Recv == nil {
				api[decl.Name.Name] = true
			} else if recv := receiverType(decl.Recv.List[0].Type); ast.IsExported(recv) {
				api[recv+"."+decl.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, spec := range decl.Specs {
				api.addSpec(spec)
			}
		}
	}
}

// addSpec records an exported type with its exported fields, or exported
// variables and constants.
func (api API) addSpec(spec ast.Spec) {
	switch spec := spec.(type) {
	case *ast.TypeSpec:
		if !spec.Name.IsExported() {
			return
		}
		api[spec.Name.Name] = true
		if st, ok := spec.Type.(*ast.StructType); ok {
			for _, field := range st.Fields.List {
				for _, name := range field.Names {
					if name.IsExported() {
						api[spec.Name.Name+"."+name.Name] = true
					}
				}
			}
		}
	case *ast.ValueSpec:
		for _, name := range spec.Names {
			if name.IsExported() {
				api[name.Name] = true
			}
		}
	}
}

// receiverType names a method's receiver type: T for T, *T, T[P] and *T[P].
func receiverType(expr ast.Expr) string {
	for {
		switch e := expr.(type) {
		case *ast.StarExpr:
			expr = e.X
		case *ast.IndexExpr:
			expr = e.X
		case *ast.IndexListExpr:
			expr = e.X
		case *ast.Ident:
			return e.Name
		default:
			return ""
		}
	}
}

// Missing returns the names of needs that api lacks, in order.
func (api API) Missing(needs []string) []string {
	var missing []string
	for _, name := range needs {
		if !api[name] {
			missing = append(missing, name)
		}
	}
	return missing
}

// Names lists api's names, sorted.
func (api API) Names() []string {
	return slices.Sorted(maps.Keys(api))
}
