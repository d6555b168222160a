// Command kusciacite checks the kuscia citations of testdata/contract.yaml
// against a checkout of secretflow/kuscia: every agent citation
// "secretflow/kuscia <path>.go <Func>" must name a Go file of the checkout
// that declares a function or method Func (found with go/parser, not by
// text). It prints the checkout's commit and the citations that fail, and
// exits 1 when any does. With -record it writes the commit into the table as
// kuscia_commit once every citation passes.
//
//	go run ./hack/kusciacite -kuscia /path/to/kuscia [-rev HEAD] [-record] [-contract testdata/contract.yaml]
//
// -kuscia is either a work tree, a directory holding pkg/agent whose files
// are read from disk (its commit is git's HEAD when it is a git work tree;
// local changes are not seen in it), or a git directory, bare or a work
// tree's .git, whose files are read at -rev with git show.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"
)

// kusciaRepo begins every kuscia citation.
const kusciaRepo = "secretflow/kuscia "

// citation is one kuscia citation of the contract table.
type citation struct {
	Promise  int    // 1-based index in promises
	Where    string // the entry's where
	Sentence string // the entry's sentence
	At       string // the citation as written
	Path     string // the Go file, a slash path in the checkout ("" when At is malformed)
	Func     string // the function or method name
}

// problem is a citation that fails, and why.
type problem struct {
	cite   citation
	reason string
}

// form is "<path>.go <Func>" after the repository.
var form = regexp.MustCompile(`^(\S+\.go) ([A-Za-z_][A-Za-z0-9_]*)$`)

// kusciaCitations returns the kuscia citations of a contract table, in
// order. A citation not of the form "<path>.go <Func>" is returned with an
// empty Path, for check to report.
func kusciaCitations(contract []byte) ([]citation, error) {
	var table struct {
		Promises []struct {
			Where    string `json:"where"`
			Sentence string `json:"sentence"`
			Agent    []struct {
				At string `json:"at"`
			} `json:"agent"`
		} `json:"promises"`
	}
	if err := yaml.Unmarshal(contract, &table); err != nil {
		return nil, err
	}
	var cites []citation
	for i, e := range table.Promises {
		for _, a := range e.Agent {
			if !strings.HasPrefix(a.At, kusciaRepo) {
				continue
			}
			c := citation{Promise: i + 1, Where: e.Where, Sentence: e.Sentence, At: a.At}
			if m := form.FindStringSubmatch(strings.TrimPrefix(a.At, kusciaRepo)); m != nil {
				c.Path, c.Func = m[1], m[2]
			}
			cites = append(cites, c)
		}
	}
	return cites, nil
}

// source is a kuscia checkout.
type source interface {
	// ReadFile returns the file at the slash path name.
	ReadFile(name string) ([]byte, error)
	// Commit returns the commit the files are read at.
	Commit() (string, error)
	String() string
}

// dirSource is a work tree on disk.
type dirSource struct{ root string }

func (s dirSource) ReadFile(name string) ([]byte, error) {
	return os.ReadFile(filepath.Join(s.root, filepath.FromSlash(name)))
}

func (s dirSource) Commit() (string, error) {
	return gitOutput("-C", s.root, "rev-parse", "--verify", "HEAD^{commit}")
}

func (s dirSource) String() string { return "work tree " + s.root }

// gitSource is a git directory read at a revision.
type gitSource struct{ gitDir, rev string }

func (s gitSource) ReadFile(name string) ([]byte, error) {
	cmd := exec.Command("git", "--git-dir="+s.gitDir, "show", s.rev+":"+name)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if strings.Contains(msg, "does not exist in") || strings.Contains(msg, "exists on disk, but not in") {
			return nil, fmt.Errorf("%s at %s: %w", name, s.rev, fs.ErrNotExist)
		}
		return nil, fmt.Errorf("git show %s:%s: %v: %s", s.rev, name, err, msg)
	}
	return out, nil
}

func (s gitSource) Commit() (string, error) {
	return gitOutput("--git-dir="+s.gitDir, "rev-parse", "--verify", s.rev+"^{commit}")
}

func (s gitSource) String() string { return "git directory " + s.gitDir + " at " + s.rev }

// gitOutput runs git and returns its trimmed standard output.
func gitOutput(args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// openSource opens the kuscia checkout at dir: a work tree when it holds
// pkg/agent, else a git directory read at rev.
func openSource(dir, rev string) (source, error) {
	if fi, err := os.Stat(filepath.Join(dir, "pkg", "agent")); err == nil && fi.IsDir() {
		return dirSource{root: dir}, nil
	}
	if _, err := gitOutput("--git-dir="+dir, "rev-parse", "--git-dir"); err != nil {
		return nil, fmt.Errorf("%s is neither a kuscia work tree (no pkg/agent) nor a git directory: %v", dir, err)
	}
	return gitSource{gitDir: dir, rev: rev}, nil
}

// check reports the citations that src does not bear out: one not of the
// form "<path>.go <Func>", a file that is missing or does not parse, and a
// file that declares no function or method of that name (methods count
// whatever their receiver; a declaration in another file of the package
// does not).
func check(src source, cites []citation) []problem {
	type parsed struct {
		funcs map[string]bool
		err   error
	}
	files := map[string]parsed{}
	var problems []problem
	for _, c := range cites {
		if c.Path == "" {
			problems = append(problems, problem{c, "want " + kusciaRepo + "<path>.go <Func>"})
			continue
		}
		if clean := path.Clean(c.Path); clean != c.Path || path.IsAbs(clean) || strings.HasPrefix(clean, "../") {
			problems = append(problems, problem{c, "want a clean path relative to the checkout's root"})
			continue
		}
		f, ok := files[c.Path]
		if !ok {
			f.funcs, f.err = declaredFuncs(src, c.Path)
			files[c.Path] = f
		}
		switch {
		case f.err != nil:
			problems = append(problems, problem{c, f.err.Error()})
		case !f.funcs[c.Func]:
			problems = append(problems, problem{c, fmt.Sprintf("%s declares no function or method %s", c.Path, c.Func)})
		}
	}
	return problems
}

// declaredFuncs returns the names of the functions and methods that the Go
// file name of src declares.
func declaredFuncs(src source, name string) (map[string]bool, error) {
	b, err := src.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s is not a file of the checkout", name)
	}
	if err != nil {
		return nil, err
	}
	f, err := parser.ParseFile(token.NewFileSet(), name, b, parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("%s does not parse: %v", name, err)
	}
	funcs := map[string]bool{}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok {
			funcs[fd.Name.Name] = true
		}
	}
	return funcs, nil
}

// commitLine is the kuscia_commit line of the contract table.
var commitLine = regexp.MustCompile(`(?m)^kuscia_commit:[^\n]*$`)

// fullCommit is a full commit ID.
var fullCommit = regexp.MustCompile(`^[0-9a-f]{40}$`)

// recordedCommit returns the kuscia_commit of a contract table.
func recordedCommit(contract []byte) (string, error) {
	var table struct {
		KusciaCommit string `json:"kuscia_commit"`
	}
	if err := yaml.Unmarshal(contract, &table); err != nil {
		return "", err
	}
	return table.KusciaCommit, nil
}

// recordCommit rewrites the kuscia_commit line of the table at file.
func recordCommit(file, commit string) error {
	if !fullCommit.MatchString(commit) {
		return fmt.Errorf("%q is not a full commit ID", commit)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	if n := len(commitLine.FindAllIndex(b, -1)); n != 1 {
		return fmt.Errorf("%s has %d kuscia_commit lines, want 1", file, n)
	}
	b = commitLine.ReplaceAll(b, []byte(`kuscia_commit: "`+commit+`"`))
	return os.WriteFile(file, b, 0o644)
}

func main() {
	kuscia := flag.String("kuscia", "", "the kuscia checkout: a work tree, or a git directory (bare or .git)")
	rev := flag.String("rev", "HEAD", "the revision to read a git directory at")
	contract := flag.String("contract", filepath.Join("testdata", "contract.yaml"), "the contract table")
	record := flag.Bool("record", false, "write the checkout's commit into the table as kuscia_commit when every citation passes")
	flag.Parse()
	if *kuscia == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: kusciacite -kuscia <kuscia work tree or git directory> [-rev HEAD] [-record] [-contract testdata/contract.yaml]")
		os.Exit(2)
	}
	if err := run(*kuscia, *rev, *contract, *record); err != nil {
		fmt.Fprintln(os.Stderr, "kusciacite:", err)
		if errors.Is(err, errBadCitations) {
			os.Exit(1)
		}
		os.Exit(2)
	}
}

// errBadCitations is run's error when a citation fails.
var errBadCitations = errors.New("kuscia citations that the checkout does not bear out")

func run(kuscia, rev, contract string, record bool) error {
	b, err := os.ReadFile(contract)
	if err != nil {
		return err
	}
	cites, err := kusciaCitations(b)
	if err != nil {
		return fmt.Errorf("%s: %v", contract, err)
	}
	src, err := openSource(kuscia, rev)
	if err != nil {
		return err
	}
	commit, commitErr := src.Commit()
	if commitErr != nil {
		fmt.Printf("kuscia: %s, commit unknown (%v)\n", src, commitErr)
	} else {
		fmt.Printf("kuscia: %s, commit %s\n", src, commit)
	}
	problems := check(src, cites)
	files, funcs := map[string]bool{}, map[string]bool{}
	for _, c := range cites {
		files[c.Path] = true
		funcs[c.Path+" "+c.Func] = true
	}
	for _, p := range problems {
		fmt.Printf("%s: promise #%d (%s: %q): %q: %s\n", contract, p.cite.Promise, p.cite.Where, p.cite.Sentence, p.cite.At, p.reason)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%d of %d: %w", len(problems), len(cites), errBadCitations)
	}
	fmt.Printf("%s: all %d kuscia citations (%d functions in %d files) found\n", contract, len(cites), len(funcs), len(files))
	recorded, _ := recordedCommit(b)
	switch {
	case record && commitErr != nil:
		return fmt.Errorf("cannot record the commit: %v", commitErr)
	case record && recorded != commit:
		if err := recordCommit(contract, commit); err != nil {
			return err
		}
		fmt.Printf("%s: kuscia_commit %s recorded (was %q)\n", contract, commit, recorded)
	case record:
		fmt.Printf("%s: kuscia_commit is %s already\n", contract, commit)
	case commitErr == nil && recorded != commit:
		fmt.Printf("%s records kuscia_commit %q; run again with -record to record %s\n", contract, recorded, commit)
	}
	return nil
}
