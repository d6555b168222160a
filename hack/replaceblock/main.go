// Command replaceblock prints the go.mod replace block a module needs to
// require k8s.io/kubernetes: one directive per k8s.io staging module, pinned
// to the v0.x release that matches the kubernetes version.
//
// Usage, from the kit's root:
//
//	go run ./hack/replaceblock                 # for the version the kit pins
//	go run ./hack/replaceblock -version v1.37.2
//	go run ./hack/replaceblock -version v1.37.2 -rewrite ./testdata/consumer
//
// With -rewrite it prints nothing and moves the module in that directory to
// the release instead (make test-k8s does, on a copy of the repository):
// k8s.io/kubernetes and its staging modules required at that release, the
// replace block swapped for the release's. `go mod tidy` is left to the
// caller.
//
// It reads the kubernetes go.mod through the go command (module cache or
// proxy), so it needs nothing but Go.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/kri-kit/testkit/hack/replaceblock/staging"
)

func main() {
	version := flag.String("version", "", "k8s.io/kubernetes version, e.g. v1.37.2 (default: the version in the current module's go.mod)")
	rewrite := flag.String("rewrite", "", "a module's directory: rewrite its go.mod to the release instead of printing the block")
	flag.Parse()
	if err := run(*version, *rewrite); err != nil {
		fmt.Fprintln(os.Stderr, "replaceblock:", err)
		os.Exit(1)
	}
}

func run(version, rewrite string) error {
	if version == "" {
		out, err := goCmd("list", "-m", "-f", "{{.Version}}", "k8s.io/kubernetes")
		if err != nil {
			return fmt.Errorf("finding the pinned k8s.io/kubernetes version: %w", err)
		}
		version = strings.TrimSpace(string(out))
	}
	out, err := goCmd("mod", "download", "-json", "k8s.io/kubernetes@"+version)
	if err != nil {
		return fmt.Errorf("downloading k8s.io/kubernetes@%s: %w", version, err)
	}
	var info struct{ GoMod, Error string }
	if err := json.Unmarshal(out, &info); err != nil {
		return fmt.Errorf("reading go mod download output: %w", err)
	}
	if info.Error != "" {
		return fmt.Errorf("downloading k8s.io/kubernetes@%s: %s", version, info.Error)
	}
	gomod, err := os.ReadFile(info.GoMod)
	if err != nil {
		return err
	}
	if rewrite != "" {
		return rewriteModule(rewrite, version, staging.Modules(gomod))
	}
	block, err := staging.ReplaceBlock(version, gomod)
	if err != nil {
		return err
	}
	fmt.Print(block)
	return nil
}

// rewriteModule moves the module in dir to the kubernetes release version.
func rewriteModule(dir, version string, staged []string) error {
	out, err := goCmdIn(dir, "mod", "edit", "-json")
	if err != nil {
		return err
	}
	var mod staging.GoMod
	if err := json.Unmarshal(out, &mod); err != nil {
		return fmt.Errorf("reading the go.mod in %s: %w", dir, err)
	}
	args, err := staging.EditArgs(mod, version, staged)
	if err != nil {
		return err
	}
	_, err = goCmdIn(dir, append([]string{"mod", "edit"}, args...)...)
	return err
}

func goCmd(args ...string) ([]byte, error) { return goCmdIn("", args...) }

func goCmdIn(dir string, args ...string) ([]byte, error) {
	var stderr bytes.Buffer
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
