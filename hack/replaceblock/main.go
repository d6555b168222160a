// Command replaceblock prints the go.mod replace block a module needs to
// require k8s.io/kubernetes: one directive per k8s.io staging module, pinned
// to the v0.x release that matches the kubernetes version.
//
// Usage, from the kit's root:
//
//	go run ./hack/replaceblock                 # for the version the kit pins
//	go run ./hack/replaceblock -version v1.37.2
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
	flag.Parse()
	if err := run(*version); err != nil {
		fmt.Fprintln(os.Stderr, "replaceblock:", err)
		os.Exit(1)
	}
}

func run(version string) error {
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
	block, err := staging.ReplaceBlock(version, gomod)
	if err != nil {
		return err
	}
	fmt.Print(block)
	return nil
}

func goCmd(args ...string) ([]byte, error) {
	var stderr bytes.Buffer
	cmd := exec.Command("go", args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
