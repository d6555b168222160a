package remotebackend

import (
	"fmt"

	"github.com/distribution/reference"
)

// normalizeImage returns image as a container runtime reports it: the
// fully qualified reference, with the default registry, repository prefix
// and tag filled in (docker.io/library/busybox:1.36 for busybox:1.36,
// docker.io/library/busybox:latest for busybox). containerd and CRI-O do the
// same (reference.ParseNormalizedNamed, then reference.TagNameOnly), and the
// kubelet reports the string the runtime returns (kubelet_pods.go,
// convertContainerStatus). A digest reference keeps its digest.
func normalizeImage(image string) (string, error) {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return "", fmt.Errorf("invalid image reference %q: %w", image, err)
	}
	return reference.TagNameOnly(named).String(), nil
}
