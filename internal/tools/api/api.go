// Package api type-checks the library's packages in a module directory,
// this checkout or a release extracted from git, and lists their exported
// names: what apicheck diffs and what README.md may document.
package api

import (
	"fmt"
	"go/types"
	"os"
	"slices"
	"strings"

	"golang.org/x/tools/go/packages"
)

// Packages are a load's packages by import path.
type Packages map[string]*types.Package

// Load type-checks the packages at paths in the module at dir for goos
// (amd64, cgo off). With scratch false, dir is this checkout: a package
// that does not build is an error (ours must build on every platform),
// and the go command may not touch go.mod. With scratch true, dir is a
// scratch module or an extracted release: the go command may complete its
// go.mod and go.sum, and a package that does not build for goos
// (upstream's perf on windows) is left out of the result.
func Load(dir, goos string, scratch bool, paths []string) (Packages, error) {
	env := append(os.Environ(), "GOOS="+goos, "GOARCH=amd64", "CGO_ENABLED=0", "GOWORK=off")
	if scratch {
		env = append(env, "GOFLAGS=-mod=mod")
	}
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedTypes,
		Dir:  dir,
		Env:  env,
	}
	pkgs, err := packages.Load(cfg, paths...)
	if err != nil {
		return nil, err
	}
	loaded := make(Packages)
	for _, pkg := range pkgs {
		if len(pkg.Errors) > 0 {
			if !scratch {
				return nil, fmt.Errorf("%s does not build for %s: %v", pkg.PkgPath, goos, pkg.Errors[0])
			}
			continue
		}
		loaded[pkg.PkgPath] = pkg.Types
	}
	return loaded, nil
}

// Kind is what an exported name is.
type Kind int

const (
	Func Kind = iota
	Var
	Const
	Type
	Method
	Field
)

// An Object is an exported name of a package: a package-level name
// ("NewReader", "Reader"), or a method or field of an exported type
// ("Reader.Positions", "Record.RawSample").
type Object struct {
	// Pkg is the package's name: ringbuf, perf.
	Pkg string
	// Name is the name within the package, a type's member after a dot.
	Name string
	Kind Kind
	// Interface is set for a method of an interface type.
	Interface bool
	// Generic is set for a generic type and its members, which a
	// reference must instantiate.
	Generic bool
}

// Qualified is the name as CHANGELOG.md writes it: ringbuf.Reader.Positions.
func (o Object) Qualified() string { return o.Pkg + "." + o.Name }

// Member is the last part of the name: Positions for Reader.Positions.
func (o Object) Member() string {
	_, member, ok := strings.Cut(o.Name, ".")
	if !ok {
		return o.Name
	}
	return member
}

// Names lists the exported names of pkg, sorted: its package-level names,
// and the exported methods (those promoted from embedded fields too) and
// fields of its exported types.
func Names(pkg *types.Package) []Object {
	var objects []Object
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch obj := obj.(type) {
		case *types.Func:
			objects = append(objects, Object{Pkg: pkg.Name(), Name: name, Kind: Func})
		case *types.Var:
			objects = append(objects, Object{Pkg: pkg.Name(), Name: name, Kind: Var})
		case *types.Const:
			objects = append(objects, Object{Pkg: pkg.Name(), Name: name, Kind: Const})
		case *types.TypeName:
			objects = append(objects, members(pkg.Name(), obj)...)
		}
	}
	slices.SortFunc(objects, func(a, b Object) int { return strings.Compare(a.Name, b.Name) })
	return objects
}

// members returns the type and its exported methods and fields.
func members(pkg string, tn *types.TypeName) []Object {
	t := tn.Type()
	generic := false
	if named, ok := t.(*types.Named); ok && named.TypeParams().Len() > 0 {
		generic = true
	}
	objects := []Object{{Pkg: pkg, Name: tn.Name(), Kind: Type, Generic: generic}}
	isInterface := types.IsInterface(t)
	methods := types.NewMethodSet(t)
	if !isInterface {
		methods = types.NewMethodSet(types.NewPointer(t))
	}
	for sel := range methods.Methods() {
		if m := sel.Obj(); m.Exported() {
			objects = append(objects, Object{Pkg: pkg, Name: tn.Name() + "." + m.Name(), Kind: Method, Interface: isInterface, Generic: generic})
		}
	}
	if st, ok := t.Underlying().(*types.Struct); ok {
		for f := range st.Fields() {
			if f.Exported() {
				objects = append(objects, Object{Pkg: pkg, Name: tn.Name() + "." + f.Name(), Kind: Field, Generic: generic})
			}
		}
	}
	return objects
}
