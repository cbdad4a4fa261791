package release

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ebpf-zc/ebpf/internal/tools/api"
)

// Program returns a main package that refers to each of the objects, so
// that it compiles only against a module where each exists as what it
// is: a function, variable or constant by value, a type by a conversion,
// a method by a method expression, a field by a selector. Generic types
// and their members are left out: none of ours is one.
func Program(version string, objects []api.Object) string {
	var refs, imports []string
	for _, o := range objects {
		if o.Generic {
			continue
		}
		typ, member, isMember := strings.Cut(o.Name, ".")
		var ref string
		switch {
		case !isMember && o.Kind == api.Type:
			ref = fmt.Sprintf("_ = (*%s.%s)(nil)", o.Pkg, typ)
		case !isMember:
			ref = fmt.Sprintf("_ = %s.%s", o.Pkg, o.Name)
		case o.Kind == api.Field:
			ref = fmt.Sprintf("_ = func(v *%s.%s) any { return v.%s }", o.Pkg, typ, member)
		case o.Interface:
			ref = fmt.Sprintf("_ = %s.%s.%s", o.Pkg, typ, member)
		default:
			ref = fmt.Sprintf("_ = (*%s.%s).%s", o.Pkg, typ, member)
		}
		refs = append(refs, "\t"+ref)
		imports = append(imports, "\t\""+ModulePath+"/"+o.Pkg+"\"")
	}
	slices.Sort(refs)
	slices.Sort(imports)
	return "// Command importer uses every name README.md documents for " + version + ".\n" +
		"package main\n\nimport (\n" + strings.Join(slices.Compact(imports), "\n") + "\n)\n\n" +
		"func main() {\n" + strings.Join(slices.Compact(refs), "\n") + "\n}\n"
}
