package simprovider_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kri-kit/testkit/vk/simprovider"
)

// A missing executable named in Args (no Command: the image's entrypoint
// is taken to be absent) fails the start with RunContainerError naming it,
// for an app container and for an init container alike; it is no panic.
func TestMissingExecutableInArgsFailsTheStart(t *testing.T) {
	for _, init := range []bool{false, true} {
		c := corev1.Container{Name: "app", Image: "busybox", Args: []string{"/nonexistent/app", "-x"}}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-1"}}
		if init {
			pod.Spec.InitContainers = []corev1.Container{c}
			pod.Spec.Containers = []corev1.Container{{Name: "main", Image: "busybox"}}
		} else {
			pod.Spec.Containers = []corev1.Container{c}
		}
		p := simprovider.New()
		ctx := context.Background()
		if err := p.CreatePod(ctx, pod); err != nil {
			t.Fatal(err)
		}
		st, err := p.GetPodStatus(ctx, "default", "web")
		if err != nil {
			t.Fatal(err)
		}
		statuses := st.ContainerStatuses
		if init {
			statuses = st.InitContainerStatuses
		}
		w := statuses[0].State.Waiting
		if w == nil || w.Reason != "RunContainerError" || !strings.Contains(w.Message, `"/nonexistent/app"`) {
			t.Errorf("init %v: state %+v, want Waiting RunContainerError naming /nonexistent/app", init, statuses[0].State)
		}
		if st.Phase != corev1.PodPending {
			t.Errorf("init %v: phase %s, want Pending", init, st.Phase)
		}
		p.Close()
	}
}
