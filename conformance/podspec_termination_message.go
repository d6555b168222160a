package conformance

import (
	"fmt"
	"strings"

	"github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// The termination message specs (KRI-POD-060, 061): the message file and the
// FallbackToLogsOnError policy.
var podspecTerminationMessageSpecs = []*specDef{
	{id: "KRI-POD-060", level: Must, kind: kindPod, groups: []string{"pod-spec", "termination-message"}, caps: []Capability{CapTerminationMessage}, pod: podTerminationMessage,
		text: "what a container writes to the file at its terminationMessagePath becomes the message of its exited instance in GetPodStatus and of its Terminated state in RefreshPodStatus"},
	{id: "KRI-POD-061", level: Must, kind: kindPod, groups: []string{"pod-spec", "termination-message"}, caps: []Capability{CapTerminationMessage}, pod: podTerminationMessageFallback,
		text: "with terminationMessagePolicy FallbackToLogsOnError, a container that fails without writing the file gets the tail of its log as message, one that succeeds gets none, and a written file wins over the log"},
}

// terminationCase is a container of the termination-message specs and the
// message its exited instance must carry ("" for none).
type terminationCase struct {
	c    v1.Container
	want string
	how  string
}

// writesMessage is a container that writes msg to its termination message
// file (unless msg is empty), prints out on stdout (unless empty) and exits
// with code.
func (e *podEnv) writesMessage(name, msg, out string, code int, policy v1.TerminationMessagePolicy) v1.Container {
	path := e.w().TerminationMessagePath()
	var script []string
	if out != "" {
		script = append(script, "echo -n "+out)
	}
	if msg != "" {
		script = append(script, "echo -n "+msg+" > "+path)
	}
	script = append(script, fmt.Sprintf("exit %d", code))
	c := e.shell(name, strings.Join(script, "; "))
	c.TerminationMessagePath, c.TerminationMessagePolicy = path, policy
	return c
}

// checkTerminationMessages runs the containers of cases in one pod under
// RestartPolicy Never until each has exited, then checks the message of
// each in GetPodStatus and in the Terminated state RefreshPodStatus
// reports.
func (e *podEnv) checkTerminationMessages(name string, cases []terminationCase) {
	containers := make([]v1.Container, len(cases))
	for i, tc := range cases {
		containers[i] = tc.c
	}
	pod := e.newPod(name, v1.RestartPolicyNever, containers...)
	st := e.syncUntil(pod, "every container exited", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		for _, tc := range cases {
			g.Expect(exitedOf(st, tc.c.Name)).NotTo(gomega.BeEmpty(), "container %s (%s) has not exited: %s", tc.c.Name, tc.how, describeStatus(st))
		}
	})
	ps := e.publish(pod, st)
	for _, tc := range cases {
		got := exitedOf(st, tc.c.Name)[0].Message
		if !messageMatches(got, tc.want) {
			e.failf("container %s (%s) exited with message %q in GetPodStatus, want %s", tc.c.Name, tc.how, got, wantMessage(tc.want))
		}
		cs := apiStatusOf(ps.ContainerStatuses, tc.c.Name)
		if cs == nil || cs.State.Terminated == nil {
			e.failf("RefreshPodStatus does not report container %s Terminated: %+v", tc.c.Name, ps.ContainerStatuses)
		}
		if got := cs.State.Terminated.Message; !messageMatches(got, tc.want) {
			e.failf("RefreshPodStatus reports container %s (%s) Terminated with message %q, want %s", tc.c.Name, tc.how, got, wantMessage(tc.want))
		}
	}
}

func wantMessage(want string) string {
	if want == "" {
		return "none"
	}
	return fmt.Sprintf("%q", want)
}

func podTerminationMessage(e *podEnv) {
	e.step("syncing a pod whose containers write their termination message file, then exit 0 and 1")
	e.checkTerminationMessages("termmsg", []terminationCase{
		{e.writesMessage("done", "KRI-DONE", "", 0, v1.TerminationMessageReadFile), "KRI-DONE", "writes KRI-DONE to its file, exits 0"},
		{e.writesMessage("failed", "KRI-FAILED", "", 1, v1.TerminationMessageReadFile), "KRI-FAILED", "writes KRI-FAILED to its file, exits 1"},
		{e.writesMessage("logonly", "", "KRI-LOG", 1, v1.TerminationMessageReadFile), "", "only prints KRI-LOG, exits 1, policy File"},
	})
}

func podTerminationMessageFallback(e *podEnv) {
	e.step("syncing a pod whose containers have terminationMessagePolicy FallbackToLogsOnError")
	e.checkTerminationMessages("termlog", []terminationCase{
		{e.writesMessage("fails", "", "KRI-LOG-TAIL", 1, v1.TerminationMessageFallbackToLogsOnError), "KRI-LOG-TAIL", "prints KRI-LOG-TAIL, exits 1"},
		{e.writesMessage("succeeds", "", "KRI-LOG-OK", 0, v1.TerminationMessageFallbackToLogsOnError), "", "prints KRI-LOG-OK, exits 0"},
		{e.writesMessage("file", "KRI-FILE", "KRI-LOG-FILE", 1, v1.TerminationMessageFallbackToLogsOnError), "KRI-FILE", "prints KRI-LOG-FILE, writes KRI-FILE to its file, exits 1"},
	})
}

// messageMatches reports whether got carries the termination message want:
// the kubelet appends it to the runtime's own message after ": "
// (convertToKubeContainerStatus), and a log tail may end in a newline.
func messageMatches(got, want string) bool {
	if want == "" {
		return got == "" || !strings.Contains(got, "KRI-")
	}
	got = strings.TrimRight(got, "\n")
	return got == want || strings.HasSuffix(got, ": "+want)
}
