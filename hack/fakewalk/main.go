// Command fakewalk measures how far a reader must travel to follow a pod
// through the fake provider's SyncPod: it copies the module to a scratch
// directory, makes every function of fake/, sim/workload/ and kri/ (test files
// aside) record the file it runs in, runs the walks of testdata/walk_test.go
// there (each a pod synced as kuscia's agent syncs it: GetPodStatus, then
// SyncPod) and prints, per walk, the files the syncing goroutine passed
// through, in the order first entered, and how many times it came back to a
// file it had already left.
//
//	go run ./hack/fakewalk          # the checkout's working tree
//	go run ./hack/fakewalk -v       # also the whole sequence of files
//
// The figures are of the calls the syncing goroutine makes; what the
// provider does on goroutines of its own (timers, the Start loop) is counted
// apart. The scratch copy is removed afterwards.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// instrumented are the directories (with their subdirectories) whose
// functions record the file they run in.
var instrumented = []string{"fake", "sim/workload", "kri"}

// tracePkg is the recorder, written into the copy of the sim module (a
// package there, not internal/, so that both the kit's packages and
// sim/workload, another module, import the one recorder).
const tracePkg = "github.com/kri-kit/testkit/sim/walktrace"

func main() {
	verbose := flag.Bool("v", false, "print each walk's whole sequence of files")
	flag.Parse()
	if err := run(*verbose); err != nil {
		fmt.Fprintln(os.Stderr, "fakewalk:", err)
		os.Exit(1)
	}
}

func run(verbose bool) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	// One fixed scratch path, so that the build cache serves what did not
	// change since the last run (a package's build depends on its path).
	scratch := filepath.Join(os.TempDir(), "kri-fakewalk")
	if err := os.RemoveAll(scratch); err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	if err := copyTree(root, scratch); err != nil {
		return fmt.Errorf("copying %s: %w", root, err)
	}
	for _, dir := range instrumented {
		if err := instrumentTree(scratch, dir); err != nil {
			return err
		}
	}
	self := filepath.Join(root, "hack", "fakewalk", "testdata")
	for src, dst := range map[string]string{
		"walktrace.go.txt": filepath.Join("sim", "walktrace", "walktrace.go"),
		"walk_test.go.txt": filepath.Join("fake", "zz_walk_test.go"),
	} {
		b, err := os.ReadFile(filepath.Join(self, src))
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(scratch, dst)), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(scratch, dst), b, 0o644); err != nil {
			return err
		}
	}
	args := []string{"test", "-count=1", "-run", "^TestWalk", "./fake/"}
	if verbose {
		args = append(args, "-v", "-args", "-walk.sequence")
	} else {
		args = append(args, "-v")
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = scratch
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go %s in the instrumented copy: %v\n%s", strings.Join(args, " "), err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "walk: "); ok {
			fmt.Println(rest)
		}
	}
	return nil
}

// moduleRoot is the directory of the go.mod of the module this runs in.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("not inside a module")
	}
	return filepath.Dir(mod), nil
}

// copyTree copies the module's files, leaving out .git and _output.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			if rel == ".git" || rel == "_output" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
}

// instrumentTree makes every function with a body in the non-test files
// under dir start with a deferred walktrace.Enter of its file.
func instrumentTree(root, dir string) error {
	return filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		return instrumentFile(path, filepath.ToSlash(rel))
	})
}

func instrumentFile(path, name string) error {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
	if err != nil {
		return err
	}
	n := 0
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		enter := &ast.DeferStmt{Call: &ast.CallExpr{Fun: &ast.CallExpr{
			Fun:  &ast.SelectorExpr{X: ast.NewIdent("walktrace"), Sel: ast.NewIdent("Enter")},
			Args: []ast.Expr{&ast.BasicLit{Kind: token.STRING, Value: strconv.Quote(name)}},
		}}}
		fn.Body.List = append([]ast.Stmt{enter}, fn.Body.List...)
		n++
	}
	if n == 0 {
		return nil
	}
	f.Imports = append(f.Imports, &ast.ImportSpec{Path: &ast.BasicLit{Kind: token.STRING, Value: strconv.Quote(tracePkg)}})
	imp := &ast.GenDecl{Tok: token.IMPORT, Specs: []ast.Spec{f.Imports[len(f.Imports)-1]}}
	f.Decls = append([]ast.Decl{imp}, f.Decls...)
	var buf bytes.Buffer
	if err := printer.Fprint(&buf, fset, f); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}
