package kubeletequiv

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
	"k8s.io/kubernetes/pkg/probe"
	"k8s.io/kubernetes/third_party/forked/golang/expansion"

	"github.com/kri-kit/testkit/sim/workload"
)

// kubeletExpand is the kubelet's expansion of s with vars.
func kubeletExpand(s string, vars map[string]string) string {
	return expansion.Expand(s, expansion.MappingFuncFor(vars))
}

// varSets are the variables the expansion cases run with: none, and some
// with names that look like syntax.
var varSets = []map[string]string{
	nil,
	{},
	{"A": "x", "B": "$(A)", "": "empty-name", "a$(b": "odd", "(": "paren", "$": "dollar", "A B": "space", "é": "utf8", "C": ""},
}

// expansionCases are inputs with every shape of reference the expansion
// reads: defined, undefined, escaped, unterminated, empty and nested names,
// a $ before other characters, at the end, before invalid UTF-8.
var expansionCases = []string{
	"", "plain", "$", "$$", "$$$", "$$$$", "a$", "$a", "$(", "$()", "$(A)", "$(A", "$(A)$(B)",
	"$$(A)", "$$$(A)", "$$$$(A)", "$(UNSET)", "x$(UNSET)y", "$(A)$", "$($(A))", "$(a$(b)", "$(a$(b))",
	"$((A))", "$(()", "$(()))", "$)", ")$(", "(A)", "$(A B)", "$( A)", "$(é)", "$é", "$\xff", "$\xffA",
	"\xff$(A)\xff", "$(\xff)", "100$", "$$(", "$$()", "$(A)(B)", "$(C)", "$(C)$(C)x",
	"echo $(A) $$(A) $(UNSET) $$$(A) $", "sh -c 'echo $A $(A)'", "$(A)$(", "$(A)$(B", "$($", "$()$()", "$(x $$ y $(A)",
}

func TestExpandVarsIsTheKubeletsExpansion(t *testing.T) {
	for i, vars := range varSets {
		for _, in := range expansionCases {
			if got, want := workload.ExpandVars(in, vars), kubeletExpand(in, vars); got != want {
				t.Errorf("vars #%d: ExpandVars(%q) = %q, the kubelet's %q", i, in, got, want)
			}
		}
	}
}

// Every string of up to six characters over the expansion's syntax, a name
// character and an invalid byte: the kit's expansion and the kubelet's
// agree on each.
func TestExpandVarsAgreesOnEveryShortString(t *testing.T) {
	alphabet := []string{"$", "(", ")", "A", "\xff"}
	vars := varSets[2]
	n := 0
	var walk func(prefix string, depth int)
	walk = func(prefix string, depth int) {
		n++
		if got, want := workload.ExpandVars(prefix, vars), kubeletExpand(prefix, vars); got != want {
			t.Errorf("ExpandVars(%q) = %q, the kubelet's %q", prefix, got, want)
		}
		if depth == 0 {
			return
		}
		for _, c := range alphabet {
			walk(prefix+c, depth-1)
		}
	}
	walk("", 6)
	if n != 19531 { // 1 + 5 + ... + 5^6
		t.Fatalf("walked %d strings, want 19531", n)
	}
}

func FuzzExpandVars(f *testing.F) {
	for _, in := range expansionCases {
		f.Add(in, "A", "x")
	}
	f.Fuzz(func(t *testing.T, in, name, value string) {
		vars := map[string]string{name: value}
		if got, want := workload.ExpandVars(in, vars), kubeletExpand(in, vars); got != want {
			t.Errorf("ExpandVars(%q, %q) = %q, the kubelet's %q", in, vars, got, want)
		}
	})
}

// kubeletEnv expands c's env as the kubelet's makeEnvironmentVariables does
// for literal values: in order, each value against the variables before
// it; the list the kubelet hands ExpandContainerCommandAndArgs.
func kubeletEnv(c *v1.Container) (map[string]string, []pkgcontainer.EnvVar) {
	env := map[string]string{}
	var list []pkgcontainer.EnvVar
	for _, e := range c.Env {
		v := expansion.Expand(e.Value, expansion.MappingFuncFor(env))
		env[e.Name] = v
		list = append(list, pkgcontainer.EnvVar{Name: e.Name, Value: v})
	}
	return env, list
}

func TestExpandIsTheKubeletsCommandAndArgs(t *testing.T) {
	envs := [][]v1.EnvVar{
		nil,
		{{Name: "A", Value: "x"}, {Name: "B", Value: "$(A)-$$(A)-$(C)"}, {Name: "C", Value: "c$(B)"}},
		{{Name: "A", Value: "1"}, {Name: "A", Value: "$(A)2"}, {Name: "E", Value: ""}, {Name: "F", Value: "$(E)$("}},
		{{Name: "", Value: "empty"}, {Name: "X", Value: "$()"}},
	}
	argvs := [][]string{nil, {}, {""}, expansionCases, {"sh", "-c", "echo $(A) $(B) $(C) $$(A) $(X) $(F) $(E)"}}
	for i, env := range envs {
		for j, argv := range argvs {
			c := &v1.Container{Name: "c", Env: env, Command: argv, Args: slices.Clone(argv)}
			if argv == nil {
				c.Args = nil
			}
			wantEnv, list := kubeletEnv(c)
			wantCmd, wantArgs := pkgcontainer.ExpandContainerCommandAndArgs(c, list)
			cmd, args, gotEnv := workload.Expand(c)
			// The kubelet returns nil for an empty Command or Args, the kit
			// an empty slice (Expand's contract, unchanged): both are no
			// command, so the elements are compared.
			if !slices.Equal(cmd, wantCmd) || !slices.Equal(args, wantArgs) {
				t.Errorf("env #%d, argv #%d: Expand = %q %q, the kubelet's %q %q", i, j, cmd, args, wantCmd, wantArgs)
			}
			if fmt.Sprint(gotEnv) != fmt.Sprint(wantEnv) {
				t.Errorf("env #%d: Expand's environment %q, the kubelet's %q", i, gotEnv, wantEnv)
			}
		}
	}
}

func TestContainerPortIsTheKubeletsResolveContainerPort(t *testing.T) {
	c := &v1.Container{Name: "c", Ports: []v1.ContainerPort{
		{Name: "http", ContainerPort: 8080}, {Name: "http", ContainerPort: 9090}, {Name: "zero"},
		{Name: "80", ContainerPort: 8081}, {Name: "big", ContainerPort: 70000}, {ContainerPort: 7070},
	}}
	ports := []intstr.IntOrString{
		intstr.FromInt32(80), intstr.FromInt32(0), intstr.FromInt32(-1), intstr.FromInt32(65535), intstr.FromInt32(65536),
		intstr.FromInt32(math.MaxInt32), intstr.FromInt32(math.MinInt32),
		intstr.FromString("http"), intstr.FromString("zero"), intstr.FromString("80"), intstr.FromString("big"),
		intstr.FromString("443"), intstr.FromString("+443"), intstr.FromString(" 443"), intstr.FromString("0x1bb"),
		intstr.FromString("0"), intstr.FromString("65536"), intstr.FromString("-5"), intstr.FromString(""),
		intstr.FromString("missing"), intstr.FromString("99999999999999999999999"), intstr.FromString("٣"),
		{Type: 7, IntVal: 80, StrVal: "80"},
	}
	for _, ctr := range []*v1.Container{c, {Name: "bare"}} {
		for _, p := range ports {
			got, gerr := workload.ContainerPort(p, ctr)
			want, werr := probe.ResolveContainerPort(p, ctr)
			if got != want || fmt.Sprint(gerr) != fmt.Sprint(werr) {
				t.Errorf("container %q, port %#v: ContainerPort = %d, %v; the kubelet's %d, %v", ctr.Name, p, got, gerr, want, werr)
			}
		}
	}
}

func TestReasonsAndLimitsAreTheKubelets(t *testing.T) {
	for _, e := range []struct{ kit, kubelet error }{
		{workload.ErrRunContainer, pkgcontainer.ErrRunContainer},
		{workload.ErrCrashLoopBackOff, pkgcontainer.ErrCrashLoopBackOff},
	} {
		if e.kit.Error() != e.kubelet.Error() || !errors.Is(e.kit, e.kubelet) || !errors.Is(fmt.Errorf("start: %w", e.kit), e.kubelet) {
			t.Errorf("%q: not the kubelet's %q to errors.Is", e.kit, e.kubelet)
		}
	}
	if errors.Is(workload.ErrRunContainer, pkgcontainer.ErrCrashLoopBackOff) || errors.Is(workload.ErrCrashLoopBackOff, workload.ErrRunContainer) {
		t.Error("an error of one reason is another's")
	}
	for _, l := range []struct {
		name      string
		kit, want int
	}{
		{"MaxContainerTerminationMessageLength", workload.MaxContainerTerminationMessageLength, pkgcontainer.MaxContainerTerminationMessageLength},
		{"MaxContainerTerminationMessageLogLength", workload.MaxContainerTerminationMessageLogLength, pkgcontainer.MaxContainerTerminationMessageLogLength},
		{"MaxContainerTerminationMessageLogLines", workload.MaxContainerTerminationMessageLogLines, pkgcontainer.MaxContainerTerminationMessageLogLines},
	} {
		if l.kit != l.want {
			t.Errorf("%s = %d, the kubelet's %d", l.name, l.kit, l.want)
		}
	}
}
