package hostprocess

import (
	"fmt"
	"path/filepath"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// validateUID refuses a UID that could not safely name a directory under
// RootDir/pods: empty, "." or anything with a path separator, a NUL or "..".
// Real UIDs are UUIDs, so nothing legitimate is refused.
func validateUID(uid types.UID) error {
	s := string(uid)
	switch {
	case s == "":
		return fmt.Errorf("pod has no UID")
	case s == "." || strings.Contains(s, "..") || strings.ContainsAny(s, "/\\\x00") || !filepath.IsLocal(s):
		return fmt.Errorf("pod UID %q cannot name a directory (no path separators, no \"..\")", s)
	}
	return nil
}

// validateContainerName refuses a name that could not safely name the
// container's directory under the pod directory.
func validateContainerName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("a container has no name")
	case name == "." || strings.Contains(name, "..") || strings.ContainsAny(name, "/\\\x00"):
		return fmt.Errorf("container name %q cannot name a directory (no path separators, no \"..\")", name)
	}
	return nil
}

// validatePod checks everything SyncPod needs before it starts anything, so
// that a bad pod changes nothing.
func validatePod(pod *v1.Pod) error {
	if pod == nil {
		return fmt.Errorf("%w: nil pod", ErrInvalidPod)
	}
	if err := validateUID(pod.UID); err != nil {
		return fmt.Errorf("%w: pod %s/%s: %v", ErrInvalidPod, pod.Namespace, pod.Name, err)
	}
	seen := make(map[string]bool, len(pod.Spec.InitContainers)+len(pod.Spec.Containers))
	check := func(kind string, c *v1.Container) error {
		if err := validateContainerName(c.Name); err != nil {
			return err
		}
		if seen[c.Name] {
			return fmt.Errorf("duplicate container name %q", c.Name)
		}
		seen[c.Name] = true
		argv := commandLine(c)
		if len(argv) == 0 {
			return fmt.Errorf("%s %q has no command: hostprocess pulls no image, so Command (or Args) must name the executable", kind, c.Name)
		}
		if argv[0] == "" {
			return fmt.Errorf("%s %q: the executable name is empty", kind, c.Name)
		}
		for _, e := range c.Env {
			if e.ValueFrom != nil {
				return fmt.Errorf("%s %q: env %q uses valueFrom, which hostprocess does not support: give a plain value", kind, c.Name, e.Name)
			}
			if e.Name == "" || strings.ContainsAny(e.Name, "=\x00") {
				return fmt.Errorf("%s %q: invalid env name %q", kind, c.Name, e.Name)
			}
		}
		if len(c.EnvFrom) > 0 {
			return fmt.Errorf("%s %q uses envFrom, which hostprocess does not support: give plain env values", kind, c.Name)
		}
		if c.WorkingDir != "" && !filepath.IsAbs(c.WorkingDir) {
			return fmt.Errorf("%s %q: workingDir %q is not an absolute path", kind, c.Name, c.WorkingDir)
		}
		return validateHooks(kind, c)
	}
	for i := range pod.Spec.InitContainers {
		if err := check("init container", &pod.Spec.InitContainers[i]); err != nil {
			return fmt.Errorf("%w: pod %s/%s: %v", ErrInvalidPod, pod.Namespace, pod.Name, err)
		}
	}
	for i := range pod.Spec.Containers {
		if err := check("container", &pod.Spec.Containers[i]); err != nil {
			return fmt.Errorf("%w: pod %s/%s: %v", ErrInvalidPod, pod.Namespace, pod.Name, err)
		}
	}
	return nil
}

// commandLine is the argv of c: Command followed by Args. With no image
// there is no entrypoint, so Args alone are the command line, as for an
// image without ENTRYPOINT.
func commandLine(c *v1.Container) []string {
	argv := make([]string, 0, len(c.Command)+len(c.Args))
	argv = append(argv, c.Command...)
	return append(argv, c.Args...)
}
