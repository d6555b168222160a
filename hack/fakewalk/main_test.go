package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every function with a body starts by recording its file, and the file
// imports the recorder; a file without functions is left as it is.
func TestInstrumentFile(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "a.go")
	if err := os.WriteFile(src, []byte("package a\n\nimport \"fmt\"\n\nfunc F() { fmt.Println() }\n\ntype T struct{}\n\nfunc (T) M() int { return 1 }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := instrumentFile(src, "pkg/a.go"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(src)
	got := string(b)
	if n := strings.Count(got, `defer walktrace.Enter("pkg/a.go")()`); n != 2 {
		t.Errorf("instrumented file records its name in %d functions, want 2:\n%s", n, got)
	}
	if !strings.Contains(got, `"`+tracePkg+`"`) {
		t.Errorf("instrumented file does not import %s:\n%s", tracePkg, got)
	}

	plain := filepath.Join(dir, "b.go")
	const types = "package a\n\ntype U int\n"
	if err := os.WriteFile(plain, []byte(types), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := instrumentFile(plain, "pkg/b.go"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(plain); string(b) != types {
		t.Errorf("a file without functions was changed:\n%s", b)
	}
}
