package kubeletequiv

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"maps"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kri-kit/testkit/sim/workload"
)

// TestBackOffFiguresAreTheKubelets reads the back-off figures out of the
// source of the kubelet this module requires and checks workload's against
// them: KubeletBackOff is the crash-loop back-off NewMainKubelet builds
// (pkg/kubelet/kubelet.go: newCrashLoopBackOff's initialCrashLoopBackOff and
// MaxCrashLoopBackOff, without the alpha gates, and the expiry its
// HasExpiredFunc sets, which workload takes as 2×Max), KubeletImageBackOff
// the image manager's (imageBackOffPeriod, MaxImageBackOff). The figures are
// unexported or live in pkg/kubelet, too heavy a build for a test, hence the
// source. Run by make test-release, so a Kubernetes release that changes
// them turns it red.
func TestBackOffFiguresAreTheKubelets(t *testing.T) {
	dir := moduleDir(t, "k8s.io/kubernetes")
	consts := sourceConsts(parseSource(t, filepath.Join(dir, "pkg/kubelet/apis/config/v1beta1/defaults.go")), "v1beta1.")
	kubeletGo := filepath.Join(dir, "pkg/kubelet/kubelet.go")
	kubelet := parseSource(t, kubeletGo)
	maps.Copy(consts, sourceConsts(kubelet, ""))

	for _, c := range []struct {
		kit     string
		got     time.Duration
		kubelet string
	}{
		{"KubeletBackOff.Initial", workload.KubeletBackOff.Initial, "initialCrashLoopBackOff"},
		{"KubeletBackOff.Max", workload.KubeletBackOff.Max, "MaxCrashLoopBackOff"},
		{"KubeletImageBackOff.Initial", workload.KubeletImageBackOff.Initial, "imageBackOffPeriod"},
		{"KubeletImageBackOff.Max", workload.KubeletImageBackOff.Max, "MaxImageBackOff"},
	} {
		e, ok := consts[c.kubelet]
		if !ok {
			t.Errorf("%s: no constant %s in %s: the kit's back-off can no longer be checked against the kubelet's; find where this release keeps it", c.kit, c.kubelet, kubeletGo)
			continue
		}
		want, err := evalDuration(e, consts, 0)
		if err != nil {
			t.Errorf("%s: the kubelet's %s: %v", c.kit, c.kubelet, err)
			continue
		}
		if c.got != want {
			t.Errorf("workload.%s is %v, the kubelet's %s is %v: every simulated provider would back off otherwise than the kubelet", c.kit, c.got, c.kubelet, want)
		}
	}

	expiry, err := crashLoopExpiry(kubelet, consts)
	if err != nil {
		t.Fatalf("the kubelet's crash-loop back-off expiry (%s: klet.crashLoopBackOff.HasExpiredFunc): %v", kubeletGo, err)
	}
	if got := 2 * workload.KubeletBackOff.Max; got != expiry {
		t.Errorf("workload.BackOffState starts a back-off over after 2×KubeletBackOff.Max = %v, the kubelet's HasExpiredFunc after %v", got, expiry)
	}
}

// moduleDir is the directory of the module path in this module's build
// list.
func moduleDir(t *testing.T, path string) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", path).Output()
	if err != nil {
		t.Fatalf("go list -m %s: %v", path, err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		t.Fatalf("go list -m %s: no directory (module not downloaded)", path)
	}
	return dir
}

// parseSource parses a Go file of the kubelet's source.
func parseSource(t *testing.T, file string) *ast.File {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("reading the kubelet's source: %v", err)
	}
	return f
}

// sourceConsts returns the expressions of f's package-level constants and
// variables by name, each name prefixed with prefix.
func sourceConsts(f *ast.File, prefix string) map[string]ast.Expr {
	consts := map[string]ast.Expr{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || (g.Tok != token.CONST && g.Tok != token.VAR) {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			for i, n := range v.Names {
				if i < len(v.Values) {
					consts[prefix+n.Name] = v.Values[i]
				}
			}
		}
	}
	return consts
}

// timeUnits are the time package's constants a duration is written with.
var timeUnits = map[string]time.Duration{
	"Nanosecond": time.Nanosecond, "Microsecond": time.Microsecond, "Millisecond": time.Millisecond,
	"Second": time.Second, "Minute": time.Minute, "Hour": time.Hour,
}

// evalDuration evaluates a constant duration as the kubelet writes one:
// integers, time's units, other constants of consts (a qualified one as
// "pkg.Name"), products, sums and differences. Anything else is an error
// that names it.
func evalDuration(e ast.Expr, consts map[string]ast.Expr, depth int) (time.Duration, error) {
	if depth > 10 {
		return 0, fmt.Errorf("constants refer to each other more than 10 deep")
	}
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind == token.INT {
			n, err := strconv.ParseInt(e.Value, 0, 64)
			return time.Duration(n), err
		}
	case *ast.ParenExpr:
		return evalDuration(e.X, consts, depth)
	case *ast.Ident:
		if v, ok := consts[e.Name]; ok {
			return evalDuration(v, consts, depth+1)
		}
	case *ast.SelectorExpr:
		if x, ok := e.X.(*ast.Ident); ok {
			if u, ok := timeUnits[e.Sel.Name]; ok && x.Name == "time" {
				return u, nil
			}
			if v, ok := consts[x.Name+"."+e.Sel.Name]; ok {
				return evalDuration(v, consts, depth+1)
			}
		}
	case *ast.BinaryExpr:
		x, err := evalDuration(e.X, consts, depth)
		if err != nil {
			return 0, err
		}
		y, err := evalDuration(e.Y, consts, depth)
		if err != nil {
			return 0, err
		}
		switch e.Op {
		case token.MUL:
			return x * y, nil
		case token.ADD:
			return x + y, nil
		case token.SUB:
			return x - y, nil
		}
	}
	return 0, fmt.Errorf("cannot read %s as a duration", types.ExprString(e))
}

// crashLoopExpiry finds where f sets klet.crashLoopBackOff.HasExpiredFunc
// and evaluates the duration its function compares the time since the
// latest update with (eventTime.Sub(lastUpdate) > D).
func crashLoopExpiry(f *ast.File, consts map[string]ast.Expr) (time.Duration, error) {
	var lit *ast.FuncLit
	ast.Inspect(f, func(n ast.Node) bool {
		a, ok := n.(*ast.AssignStmt)
		if !ok || len(a.Lhs) != 1 || len(a.Rhs) != 1 || !strings.HasSuffix(types.ExprString(a.Lhs[0]), "crashLoopBackOff.HasExpiredFunc") {
			return true
		}
		lit, _ = a.Rhs[0].(*ast.FuncLit)
		return false
	})
	if lit == nil || len(lit.Body.List) != 1 {
		return 0, fmt.Errorf("no function of one statement assigned")
	}
	ret, ok := lit.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return 0, fmt.Errorf("its function does not return one expression")
	}
	cmp, ok := ret.Results[0].(*ast.BinaryExpr)
	if !ok || cmp.Op != token.GTR {
		return 0, fmt.Errorf("its function returns %s, not a comparison with >", types.ExprString(ret.Results[0]))
	}
	return evalDuration(cmp.Y, consts, 0)
}
