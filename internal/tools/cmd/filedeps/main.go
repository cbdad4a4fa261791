// Command filedeps shows a package's files as layers: file a uses file b
// when a names something b declares (a package-level name, a method or a
// field), type-checked, so that a word in a comment or a string is no
// use. It prints each package's files from the ground up, each with the
// files it uses, and exits 1 when files use each other in a loop, which
// no order of layers can hold:
//
//	go run ./cmd/filedeps -dir ../.. ./ringbuf ./perf
//
// Test files are left out: they may use any file of their package.
package main

import (
	"flag"
	"fmt"
	"go/types"
	"io"
	"os"
	"slices"
	"strings"

	"golang.org/x/tools/go/packages"
)

func main() {
	dir := flag.String("dir", ".", "the module the package patterns are relative to")
	flag.Parse()
	loops, err := run(os.Stdout, *dir, flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "filedeps:", err)
		os.Exit(2)
	}
	if loops > 0 {
		os.Exit(1)
	}
}

// run prints the layers of the packages that patterns name, loaded in
// dir, and returns how many loops it found.
func run(w io.Writer, dir string, patterns []string) (loops int, err error) {
	graphs, err := load(dir, patterns)
	if err != nil {
		return 0, err
	}
	for _, g := range graphs {
		loops += g.print(w)
	}
	return loops, nil
}

// graph is one package's files and what each uses of the others.
type graph struct {
	pkg   string
	files []string                       // base names, sorted
	uses  map[string]map[string][]string // file -> used file -> names, sorted
}

func load(dir string, patterns []string) ([]*graph, error) {
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo,
		Dir:  dir,
	}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, err
	}
	if packages.PrintErrors(pkgs) > 0 {
		return nil, fmt.Errorf("packages %s do not load", strings.Join(patterns, " "))
	}
	var graphs []*graph
	for _, p := range pkgs {
		g := &graph{pkg: p.PkgPath, uses: map[string]map[string][]string{}}
		fileOf := func(f string) string { return f[strings.LastIndex(f, "/")+1:] }
		for _, f := range p.GoFiles {
			g.files = append(g.files, fileOf(f))
		}
		slices.Sort(g.files)
		for id, obj := range p.TypesInfo.Uses {
			if obj.Pkg() != p.Types || !declaredAtTop(obj, p) {
				continue
			}
			from := fileOf(p.Fset.Position(id.Pos()).Filename)
			to := fileOf(p.Fset.Position(obj.Pos()).Filename)
			if from == to || !slices.Contains(g.files, to) {
				continue
			}
			if g.uses[from] == nil {
				g.uses[from] = map[string][]string{}
			}
			if !slices.Contains(g.uses[from][to], obj.Name()) {
				g.uses[from][to] = append(g.uses[from][to], obj.Name())
			}
		}
		for _, m := range g.uses {
			for _, names := range m {
				slices.Sort(names)
			}
		}
		graphs = append(graphs, g)
	}
	return graphs, nil
}

// declaredAtTop reports whether obj is a name one file can take from
// another: declared at package level, or a method or a field.
func declaredAtTop(obj types.Object, p *packages.Package) bool {
	switch o := obj.(type) {
	case *types.Func:
		return true
	case *types.Var:
		if o.IsField() {
			return true
		}
	}
	return obj.Parent() == p.Types.Scope()
}

// print writes g's files from the ground up, a floor a line, each with
// the files it uses, then every loop; it returns how many loops.
func (g *graph) print(w io.Writer) int {
	loops := g.loops()
	floor := map[string]int{}
	var floorOf func(f string, seen map[string]bool) int
	floorOf = func(f string, seen map[string]bool) int {
		if n, ok := floor[f]; ok {
			return n
		}
		if seen[f] {
			return 0 // in a loop: reported below
		}
		seen[f] = true
		n := 1
		for to := range g.uses[f] {
			n = max(n, floorOf(to, seen)+1)
		}
		delete(seen, f)
		floor[f] = n
		return n
	}
	files := slices.Clone(g.files)
	for _, f := range files {
		floorOf(f, map[string]bool{})
	}
	slices.SortStableFunc(files, func(a, b string) int { return floor[a] - floor[b] })
	fmt.Fprintf(w, "%s: %d files, %d loops\n", g.pkg, len(files), len(loops))
	for _, f := range files {
		var uses []string
		for to, names := range g.uses[f] {
			uses = append(uses, fmt.Sprintf("%s (%s)", to, strings.Join(names, ", ")))
		}
		slices.Sort(uses)
		fmt.Fprintf(w, "  %2d %s", floor[f], f)
		if len(uses) > 0 {
			fmt.Fprintf(w, " uses %s", strings.Join(uses, "; "))
		}
		fmt.Fprintln(w)
	}
	for _, loop := range loops {
		fmt.Fprintf(w, "  loop: %s\n", strings.Join(loop, " -> "))
	}
	return len(loops)
}

// loops returns the groups of files that use each other (strongly
// connected components of more than one file), each sorted.
func (g *graph) loops() [][]string {
	index, low := map[string]int{}, map[string]int{}
	onStack := map[string]bool{}
	var stack []string
	var loops [][]string
	var visit func(f string)
	visit = func(f string) {
		index[f], low[f] = len(index), len(index)
		stack = append(stack, f)
		onStack[f] = true
		for to := range g.uses[f] {
			if _, seen := index[to]; !seen {
				visit(to)
				low[f] = min(low[f], low[to])
			} else if onStack[to] {
				low[f] = min(low[f], index[to])
			}
		}
		if low[f] != index[f] {
			return
		}
		var group []string
		for {
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			onStack[top] = false
			group = append(group, top)
			if top == f {
				break
			}
		}
		if len(group) > 1 {
			slices.Sort(group)
			loops = append(loops, group)
		}
	}
	for _, f := range g.files {
		if _, seen := index[f]; !seen {
			visit(f)
		}
	}
	return loops
}
